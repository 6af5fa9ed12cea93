"""Fixed vocabularies the atom factories draw from: (canonical value, lay paraphrases) pairs.

Paraphrases are the semantic variants of seed ``000_*`` §3.5 ("an exact value, an alias, a semantic
paraphrase, or a natural-language description").
"""

from __future__ import annotations

__all__ = [
    "BACKGROUND",
    "CLAUSES",
    "DEPENDENTS",
    "DIAGNOSES",
    "DISPUTES",
    "FAMILY",
    "GOV_SENSITIVE",
    "INSURANCE_PLANS",
    "INTERVIEW",
    "LEGAL",
    "MEDICATIONS",
    "MENTAL",
    "PERFORMANCE",
    "PURCHASES",
    "RISK",
    "SHIPPING",
    "SYMPTOMS",
    "TERMINATION",
    "VULNERABILITIES",
]

Paraphrased = tuple[tuple[str, tuple[str, ...]], ...]

DIAGNOSES: Paraphrased = (
    ("type 2 diabetes", ("high blood sugar condition", "diabetic condition")),
    ("hypertension", ("high blood pressure",)),
    ("atrial fibrillation", ("irregular heartbeat",)),
    ("chronic migraine", ("recurring severe headaches",)),
    ("rheumatoid arthritis", ("inflamed swollen joints",)),
    ("hypothyroidism", ("underactive thyroid",)),
    ("asthma exacerbation", ("asthma flare-up", "trouble breathing")),
    ("gastroesophageal reflux disease", ("acid reflux", "GERD")),
    ("iron-deficiency anemia", ("low iron levels",)),
    ("sleep apnea", ("stops breathing during sleep",)),
)
SYMPTOMS: Paraphrased = (
    ("chest tightness", ("tight chest", "pressure in the chest")),
    ("shortness of breath", ("trouble catching breath", "breathlessness")),
    ("persistent lower back pain", ("aching lower back",)),
    ("recurring dizziness", ("dizzy spells",)),
    ("blurred vision", ("blurry eyesight",)),
)
MEDICATIONS: Paraphrased = (
    ("metformin 500 mg", ("metformin",)),
    ("lisinopril 10 mg", ("lisinopril",)),
    ("atorvastatin 20 mg", ("atorvastatin",)),
    ("levothyroxine 50 mcg", ("levothyroxine",)),
    ("sertraline 50 mg", ("sertraline",)),
    ("albuterol inhaler", ("rescue inhaler",)),
)
MENTAL: Paraphrased = (
    ("generalized anxiety disorder", ("constant anxiety", "anxiety disorder")),
    ("major depressive episode", ("severe depression",)),
    ("post-traumatic stress disorder", ("PTSD",)),
    ("panic disorder", ("panic attacks",)),
    ("attention deficit hyperactivity disorder", ("ADHD",)),
)
INSURANCE_PLANS = ("Blue Shield PPO", "Aetna Choice POS II", "Kaiser Silver HMO", "Cigna Open Access Plus",
                   "UnitedHealthcare Gold EPO", "Humana Medicare Advantage")
FAMILY: Paraphrased = (
    ("single parent of three children", ("raising three kids alone",)),
    ("caring for a parent with dementia", ("looks after a mother with memory loss",)),
    ("recently widowed", ("lost a spouse this year",)),
    ("spouse undergoing chemotherapy", ("partner in cancer treatment",)),
    ("recently divorced with joint custody", ("shares custody after divorce",)),
)
DEPENDENTS: Paraphrased = (
    ("two dependent children aged 7 and 11", ("two kids, 7 and 11",)),
    ("a dependent mother aged 78", ("supports an elderly mother",)),
    ("three dependent children", ("three kids at home",)),
)
GOV_SENSITIVE: Paraphrased = (
    ("pending asylum application", ("asylum case in progress",)),
    ("outstanding state tax lien", ("unpaid tax lien",)),
    ("prior benefit overpayment under review", ("benefit overpayment investigation",)),
    ("temporary protected status renewal", ("TPS renewal",)),
)
RISK: Paraphrased = (
    ("velocity rule triggered by five foreign transactions in one hour", ("rapid foreign charges",)),
    ("device fingerprint linked to a prior chargeback ring", ("device tied to chargeback fraud",)),
    ("billing address mismatch with recent password reset", ("address mismatch after reset",)),
)
DISPUTES: Paraphrased = (
    ("item never arrived", ("package not delivered",)),
    ("charged twice for the same order", ("duplicate charge",)),
    ("subscription cancelled but still billed", ("billed after cancelling",)),
    ("product arrived damaged", ("broken on arrival",)),
)
PURCHASES: Paraphrased = (
    ("home pregnancy test kit", ("pregnancy test",)),
    ("adult incontinence briefs", ("incontinence products",)),
    ("nicotine replacement patches", ("quit-smoking patches",)),
    ("hair regrowth treatment", ("hair loss treatment",)),
    ("blood glucose monitor", ("glucose meter",)),
)
SHIPPING: Paraphrased = (
    ("leave behind the blue side gate, dog in yard", ("behind the side gate",)),
    ("deliver after 6 pm, recipient works nights", ("evening delivery only",)),
    ("call on arrival, door code 4471", ("use the door code",)),
)
PERFORMANCE: Paraphrased = (
    ("rated below expectations in the last review", ("poor last review",)),
    ("placed on a performance improvement plan", ("on a PIP",)),
    ("two written warnings for attendance", ("attendance warnings",)),
)
TERMINATION: Paraphrased = (
    ("position eliminated in restructuring", ("role cut in the reorg",)),
    ("resigned citing a hostile manager", ("left because of the manager",)),
    ("terminated for policy violation", ("fired for a policy breach",)),
)
INTERVIEW: Paraphrased = (
    ("needs interviews outside school pickup hours", ("avoid school pickup times",)),
    ("currently employed, interviews must stay confidential", ("secret job search",)),
    ("requests a wheelchair-accessible interview room", ("needs step-free access",)),
)
BACKGROUND: Paraphrased = (
    ("misdemeanor conviction from 2016", ("old misdemeanor record",)),
    ("credit report shows a past bankruptcy", ("previous bankruptcy",)),
    ("employment gap due to medical leave", ("gap for medical reasons",)),
)
LEGAL: Paraphrased = (
    ("pending wrongful-termination lawsuit", ("ongoing employment lawsuit",)),
    ("restraining order against a former partner", ("protective order",)),
    ("ongoing custody litigation", ("custody court case",)),
)
CLAUSES: Paraphrased = (
    ("exclusivity clause through 2028", ("exclusive until 2028",)),
    ("uncapped liability for data breaches", ("unlimited breach liability",)),
    ("change-of-control termination right", ("can terminate on acquisition",)),
)
VULNERABILITIES: Paraphrased = (
    ("SQL injection in the invoice export endpoint", ("injectable export query",)),
    ("hard-coded admin password in the deploy script", ("admin password in deploy script",)),
    ("unauthenticated access to the metrics dashboard", ("open metrics dashboard",)),
    ("server-side request forgery in the image proxy", ("SSRF in image proxy",)),
)
