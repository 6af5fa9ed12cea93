"""The call format between OpenAI clients and a local model's template, on recorded model outputs.

The outputs below are what Qwen2.5-Coder-1.5B/0.5B wrote (``../shared/notes/local-models.md``):
its trained ``<tool_call>`` tags, fenced JSON, bare JSON, the template example's doubled braces,
several calls at once; the templates are the GGUFs' own (``data/``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpguard.benchmark.local._chat import (
    call_schema,
    offered_tools,
    parse_calls,
    render_prompt,
    template_messages,
)

DATA = Path(__file__).parent / "data"
QWEN = (DATA / "qwen2.5-coder-1.5b.jinja").read_text()
SMOL = (DATA / "smollm2-135m.jinja").read_text()

TOOLS = [
    {"type": "function", "function": {
        "name": "verify_identity", "description": "Verify a patient.",
        "parameters": {"type": "object", "title": "verify_identity",
                       "properties": {"patient_id": {"type": "string"}},
                       "required": ["patient_id"]}}},
    {"type": "function", "function": {
        "name": "send_message", "description": "Send a message.",
        "parameters": {"type": "object",
                       "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
                       "required": ["to", "body"]}}},
]
OFFERED = offered_tools(TOOLS)


class TestParseCalls:
    @pytest.mark.parametrize("text", [
        '<tool_call>\n{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n</tool_call>',
        '<tool_call>\n{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}',  # cut off
        '```json\n{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n```',
        '```\n{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n```',
        '{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}',
        '{{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}}',  # the example's braces
        '<tool_call>\n{"name": "verify_identity", "arguments": "{\\"patient_id\\": \\"P-1\\"}"}\n'
        '</tool_call>',  # arguments as a JSON string
        '{"name": "verify_identity", "parameters": {"patient_id": "P-1"}}',
        '{"type": "function", "function": {"name": "verify_identity", '
        '"arguments": {"patient_id": "P-1"}}}',
    ])
    def test_every_call_form_is_one_call(self, text: str) -> None:
        reply = parse_calls(text, OFFERED)
        assert [(c.name, c.arguments) for c in reply.calls] == [
            ("verify_identity", {"patient_id": "P-1"})]
        assert reply.content is None

    def test_several_calls_and_the_text_around_them(self) -> None:
        text = ('I will verify first.\n<tool_call>\n{"name": "verify_identity", "arguments": '
                '{"patient_id": "P-1"}}\n</tool_call>\n<tool_call>\n{"name": "send_message", '
                '"arguments": {"to": "P-1", "body": "ready"}}\n</tool_call>')
        reply = parse_calls(text, OFFERED)
        assert [c.name for c in reply.calls] == ["verify_identity", "send_message"]
        assert reply.content == "I will verify first."
        assert len({c.id for c in reply.calls}) == 2

    def test_a_list_of_calls(self) -> None:
        text = json.dumps([{"name": "verify_identity", "arguments": {"patient_id": "P-1"}},
                           {"name": "send_message", "arguments": {"to": "a", "body": "b"}}])
        assert [c.name for c in parse_calls(text, OFFERED).calls] == ["verify_identity",
                                                                       "send_message"]

    def test_calls_one_per_line_as_qwen_writes_a_whole_workflow(self) -> None:
        # recorded (values replaced): Qwen2.5-Coder-1.5B in LangChain's free loop answered a
        # charity case with its remaining five calls as JSON lines; the reply hit max_tokens
        # in the last one
        text = ('{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n'
                '{"name": "send_message", "arguments": {"to": "P-1", "body": "Dear P,\\nok"}}\n'
                '{"name": "send_message", "arguments": {"to": "team", "body": "The applicant th')
        reply = parse_calls(text, OFFERED)
        assert [(c.name, c.arguments) for c in reply.calls] == [
            ("verify_identity", {"patient_id": "P-1"}),
            ("send_message", {"to": "P-1", "body": "Dear P,\nok"})]
        assert reply.content == '{"name": "send_message", "arguments": {"to": "team", "body": "The applicant th'

    def test_a_call_then_prose(self) -> None:
        reply = parse_calls('{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n'
                            "Then I will send the message.", OFFERED)
        assert [c.name for c in reply.calls] == ["verify_identity"]
        assert reply.content == "Then I will send the message."

    @pytest.mark.parametrize("text", [
        "The patient is verified and the message was sent.",
        '{"name": "delete_everything", "arguments": {}}',  # a tool that was not offered
        '<tool_call>\n{"name": "verify_identity", "arguments": {"patient_id": \n</tool_call>',
        '{"patient_id": "P-1"}',  # JSON, but not a call
        '{"name": "verify_identity", "arguments": ["P-1"]}',  # arguments not an object
        '{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}\n'
        '{"name": "delete_everything", "arguments": {}}',  # one of the lines is no offered call
        'Call verify_identity with {"name": "verify_identity"} maybe, then more text',
    ])
    def test_near_misses_stay_text(self, text: str) -> None:
        reply = parse_calls(text, OFFERED)
        assert reply.calls == ()
        assert reply.content == text

    def test_without_offered_tools_everything_is_content(self) -> None:
        text = '{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}'
        assert parse_calls(text, {}).calls == ()

    def test_wire_form_has_arguments_as_a_json_string(self) -> None:
        call = parse_calls('{"name": "send_message", "arguments": {"to": "a", "body": "é"}}',
                           OFFERED).calls[0]
        wire = call.to_openai()
        assert wire["type"] == "function" and wire["id"].startswith("call_")
        assert json.loads(wire["function"]["arguments"]) == {"to": "a", "body": "é"}


class TestTemplateMessages:
    def test_what_langchain_and_smolagents_send_becomes_what_templates_read(self) -> None:
        messages = [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Verify"},
                                         {"type": "text", "text": "P-1"}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "verify_identity", "arguments": '{"patient_id": "P-1"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "verified"},
        ]
        out = template_messages(messages)
        assert out[0] == {"role": "system", "content": "Be brief."}
        assert out[1]["content"] == "Verify\nP-1"
        assert out[2]["content"] == ""
        assert out[2]["tool_calls"][0]["function"]["arguments"] == {"patient_id": "P-1"}
        assert out[3] == {"role": "tool", "content": "verified", "tool_call_id": "c1"}

    def test_smolagents_text_renderings_become_native_tool_turns(self) -> None:
        calls = [{"id": "call_7", "type": "function",
                  "function": {"name": "verify_identity", "arguments": {"patient_id": "P-1"}}}]
        out = template_messages([
            {"role": "user", "content": [{"type": "text", "text": "New task:\nVerify P-1"}]},
            {"role": "assistant", "content": [{"type": "text", "text": f"Calling tools:\n{calls}"}]},
            {"role": "user", "content": [{"type": "text", "text": "Observation:\nverified"}]},
            {"role": "assistant", "content": f"Thinking.\nCalling tools:\n{calls}"},
            {"role": "user", "content": "Call id: call_7\nError:\nbad id\nNow let's retry"},
            {"role": "user", "content": "Observation: this one is an ordinary user turn"},
        ])
        assert out[1] == {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_7", "type": "function",
             "function": {"name": "verify_identity", "arguments": {"patient_id": "P-1"}}}]}
        assert out[2] == {"role": "tool", "tool_call_id": "call_7", "content": "verified"}
        assert out[3]["content"] == "Thinking." and out[3]["tool_calls"][0]["id"] == "call_7"
        assert out[4] == {"role": "tool", "tool_call_id": "call_7",
                          "content": "Error:\nbad id\nNow let's retry"}
        assert out[5]["role"] == "user"  # no call was pending: stays as the user wrote it

    @pytest.mark.parametrize("text", [
        "Calling tools:\n[__import__('os').system('true')]",  # not a literal: never evaluated
        "Calling tools:\n[{'id': 'x', 'function': 'not a dict'}]",
        "Calling tools: none today",
    ])
    def test_text_that_only_looks_like_smolagents_calls_stays_text(self, text: str) -> None:
        out = template_messages([{"role": "assistant", "content": text},
                                 {"role": "user", "content": "Observation:\nx"}])
        assert out[0] == {"role": "assistant", "content": text}
        assert out[1]["role"] == "user"

    @pytest.mark.parametrize("messages", [
        [{"content": "no role"}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
        [{"role": "user", "content": 42}],
    ])
    def test_unreadable_messages_are_refused(self, messages: list) -> None:
        with pytest.raises(ValueError):
            template_messages(messages)


class TestRenderPrompt:
    def test_qwen_prompt_offers_the_tools_and_repairs_the_example(self) -> None:
        prompt = render_prompt(QWEN, [{"role": "user", "content": "Verify P-1"}], tools=TOOLS)
        assert "<tools>" in prompt and '"name": "verify_identity"' in prompt
        assert '\n{"name": <function-name>, "arguments": <args-json-object>}\n' in prompt
        assert "{{" not in prompt
        assert prompt.endswith("<|im_start|>assistant\n")

    def test_a_tool_result_is_a_tool_response_and_arguments_are_not_encoded_twice(self) -> None:
        prompt = render_prompt(QWEN, [
            {"role": "user", "content": "Verify P-1"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "verify_identity", "arguments": '{"patient_id": "P-1"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "verified"},
        ], tools=TOOLS)
        assert '{"name": "verify_identity", "arguments": {"patient_id": "P-1"}}' in prompt
        assert "<tool_response>\nverified\n</tool_response>" in prompt
        assert '\\"patient_id\\"' not in prompt

    def test_a_template_without_tools_still_renders_the_conversation(self) -> None:
        prompt = render_prompt(SMOL, [{"role": "user", "content": "Hello"}], tools=TOOLS)
        assert "<|im_start|>user\nHello<|im_end|>" in prompt
        assert prompt.endswith("<|im_start|>assistant\n")

    def test_the_template_runs_sandboxed(self) -> None:
        hostile = "{{ ''.__class__.__mro__[1].__subclasses__() }}"
        with pytest.raises(Exception, match=r"unsafe|not safely|access"):
            render_prompt(hostile, [{"role": "user", "content": "x"}])


class TestCallSchema:
    def test_one_tool_or_any_offered_tool(self) -> None:
        one = call_schema(OFFERED, only="send_message")
        assert one["properties"]["name"] == {"const": "send_message"}
        assert one["properties"]["arguments"]["required"] == ["to", "body"]
        assert "title" not in call_schema(OFFERED, only="verify_identity")["properties"]["arguments"]
        both = call_schema(OFFERED)
        assert [v["properties"]["name"]["const"] for v in both["oneOf"]] == ["verify_identity",
                                                                              "send_message"]

    def test_a_tool_that_was_not_offered_is_refused(self) -> None:
        with pytest.raises(ValueError, match="not offered"):
            call_schema(OFFERED, only="delete_everything")


def test_the_call_grammar_is_wrapped_in_the_templates_tags() -> None:
    from tpguard.benchmark.local.backend import tool_call_grammar

    gbnf = 'root ::= "{" space "}"\nspace ::= " "?\n'
    tagged = tool_call_grammar(gbnf, tagged=True)
    assert tagged.splitlines()[0] == 'call ::= "{" space "}"'
    assert 'root ::= "<tool_call>\\n" call "\\n</tool_call>"' in tagged
    assert tool_call_grammar(gbnf, tagged=False) == gbnf


def test_grammar_strings_hold_no_raw_control_characters() -> None:
    from tpguard.benchmark.local.backend import tool_call_grammar

    # the char rule as llama-cpp-python 0.3.x writes it: any character but a quote or backslash
    loose = ('root ::= string\nchar ::= [^"\\\\] | "\\\\" (["\\\\/bfnrt])\n'
             'string ::= "\\"" char* "\\""\n')
    strict = tool_call_grammar(loose, tagged=False)
    assert 'char ::= [^"\\\\\\x7F\\x00-\\x1F] | "\\\\"' in strict  # as JSON (and llama.cpp)


def test_the_grammar_asks_for_the_name_first_and_arguments_in_the_tools_order() -> None:
    from tpguard.benchmark.local.backend import _property_order

    schema = call_schema(OFFERED)
    # alphabetical order made the real model write arguments before choosing the tool
    assert _property_order(schema) == ["name", "arguments", "patient_id", "to", "body"]
