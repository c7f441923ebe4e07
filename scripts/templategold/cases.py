"""Conversations for scripts/templategold/gen.py, per family.

Each family lists only what its published template supports, plus the
template's own error paths (raise_exception, or a Python error a malformed
request triggers inside the template).
"""

import json

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city (°C or °F).",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "description": "Where to look.",
                    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                    "required": ["city"],
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["location"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "filters": {"type": "array", "items": {"type": "string"}}},
            "required": ["query"],
        },
    },
}
TOOLS = [WEATHER, SEARCH]

# Arguments with every JSON kind: Qwen3.5 prints mappings and lists with
# tojson and everything else with Python's str() (True, None, 0.1, 1e-07).
ARGS = {"location": {"city": "Zürich", "country": "CH"}, "unit": "celsius", "days": 3,
        "filters": ["open now", "café"], "exact": True, "radius": 0.1, "tiny": 1e-7, "cursor": None}


def call(cid, name, args, as_string=False):
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False) if as_string else args}}


def case(name, messages, gen=True, tools=None, **kwargs):
    kw = {"add_generation_prompt": gen}
    kw.update(kwargs)
    c = {"name": name, "messages": messages, "kwargs": kw}
    if tools is not None:
        c["tools"] = tools
    return c


def user(text):
    return {"role": "user", "content": text}


def assistant(text, **extra):
    m = {"role": "assistant", "content": text}
    m.update(extra)
    return m


def system(text):
    return {"role": "system", "content": text}


def parts(*texts):
    return [{"type": "text", "text": t} for t in texts]


ONE = [user("Hello")]
MULTI = [system("You are a concise assistant."), user("What is 2+2?"), assistant("4"), user("And 3+3?")]
MULTI_DONE = MULTI + [assistant("6")]
NON_ASCII = [user("你好，世界！ Привет 👩‍👩‍👧‍👦 café"), assistant("こんにちは 🙂"),
             user("  leading and trailing spaces \n\n\ttab\n")]

QWEN35 = [
    case("user_gen", ONE),
    case("user_no_gen", ONE, gen=False),
    case("user_enable_thinking_false", ONE, enable_thinking=False),
    case("user_enable_thinking_true", ONE, enable_thinking=True),
    case("system_multi", MULTI),
    case("system_multi_done_no_gen", MULTI_DONE, gen=False),
    case("non_ascii", NON_ASCII),
    case("reasoning_content_history", [
        user("Is 17 prime?"),
        assistant("Yes.", reasoning_content="  17 has no divisors but 1 and itself.\n"),
        user("And 21?")]),
    case("think_in_content", [
        user("Is 9 prime?"), assistant("<think>\n9 = 3*3.\n</think>\n\nNo."), user("Why?")]),
    case("content_parts", [
        {"role": "system", "content": parts("Be brief. ", "Answer in English.")},
        {"role": "user", "content": parts("Describe ", "this:")
         + [{"type": "image"}, {"type": "text", "text": " and this "}, {"type": "video"}]},
    ]),
    case("content_parts_vision_ids", [
        {"role": "user", "content": [{"type": "image"}, {"type": "image_url", "image_url": "x"}, {"type": "text", "text": "Compare."}]},
        assistant("They differ."),
        {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "And this?"}]},
    ], add_vision_id=True),
    case("tools_defined", [system("You can call tools."), user("Weather in Zürich, please.")], tools=TOOLS),
    case("tools_defined_empty_system", [system("   "), user("Weather?")], tools=TOOLS),
    case("tool_call_and_result_reasoning", [
        system("You can call tools."),
        user("Weather in Zürich, and search for cafés."),
        assistant("", reasoning_content="I should call both tools.",
                  tool_calls=[call("call_1", "get_weather", ARGS), call("call_2", "search", {"query": "cafés"})]),
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Café Sprüngli"},
    ], tools=TOOLS),
    case("tool_call_text_before_and_answer", [
        user("Weather in Zürich?"),
        assistant("Let me check.", tool_calls=[{"function": {"name": "get_weather", "arguments": {"location": {"city": "Zürich"}}}}]),
        {"role": "tool", "content": "sunny"},
        assistant("<think>\nIt said sunny.\n</think>\n\nIt is sunny."),
        user("Thanks!"),
    ], tools=TOOLS),
    case("error_no_user_query", [system("Only a system prompt.")]),
    case("error_system_not_first", [user("Hi"), system("Late system.")]),
    case("error_string_arguments", [
        user("Weather?"), assistant("", tool_calls=[call("c1", "get_weather", {"location": {"city": "Oslo"}}, True)])]),
]

GEMMA3 = [
    case("user_gen", ONE),
    case("user_no_gen", ONE, gen=False),
    case("system_multi", MULTI),
    case("system_multi_done_no_gen", MULTI_DONE, gen=False),
    case("non_ascii_trimmed", NON_ASCII),
    case("system_parts", [{"role": "system", "content": parts("Be brief.", "ignored second part")}, user("Hi")]),
    case("content_parts_with_image", [
        {"role": "user", "content": [{"type": "text", "text": "  Look at "}, {"type": "image"},
                                     {"type": "text", "text": " this.  "}]},
        {"role": "assistant", "content": parts("A cat. ")},
        user("Thanks"),
    ]),
    case("error_roles_must_alternate", [user("a"), user("b")]),
    case("error_tool_role", [user("Weather?"), assistant("Calling."), {"role": "tool", "content": "sunny"}]),
    case("error_invalid_content", [{"role": "user", "content": 42}]),
]

MISTRAL_TOOL_TURN = [
    user("Weather in Zürich and cafés?"),
    assistant("", tool_calls=[call("a1B2c3D4e", "get_weather", ARGS),
                              call("f5G6h7I8j", "search", {"query": "cafés"}, True)]),
    {"role": "tool", "tool_call_id": "a1B2c3D4e", "name": "get_weather", "content": "{\"temp\": 21}"},
    {"role": "tool", "tool_call_id": "f5G6h7I8j", "name": "search", "content": "Café Sprüngli"},
    assistant("21 °C; try Café Sprüngli."),
    user("Thanks!"),
]

MINISTRAL3 = [
    case("user_gen_default_system", ONE),
    case("user_no_gen", ONE, gen=False),
    case("system_multi", MULTI),
    case("system_multi_done", MULTI_DONE, gen=False),
    case("non_ascii", NON_ASCII),
    case("system_thinking_chunks", [
        {"role": "system", "content": [{"type": "text", "text": "Think first."},
                                       {"type": "thinking", "thinking": "plan"}]},
        user("Hi")]),
    case("user_parts_sorted_by_type", [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image"}]}]),
    case("user_parts_three", [
        {"role": "user", "content": parts("a ", "b ") + [{"type": "image_url", "image_url": {"url": "x"}}]}]),
    case("assistant_thinking_chunks", [
        user("Is 17 prime?"),
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "No divisors."}, {"type": "text", "text": "Yes."}]},
        user("And 21?")]),
    case("tools_defined", [system("You can call tools."), user("Weather?")], tools=TOOLS),
    case("tool_calls_and_results", MISTRAL_TOOL_TURN, tools=TOOLS),
    case("tool_call_empty_arguments", [
        user("Search."), assistant("Searching.", tool_calls=[call("k9L8m7N6o", "search", "", False)]),
        {"role": "tool", "tool_call_id": "k9L8m7N6o", "content": 7}], tools=TOOLS),
    case("error_roles_must_alternate", [user("a"), assistant("b"), assistant("c")]),
    case("error_empty_assistant", [user("a"), assistant("")]),
    case("error_unknown_role", [user("a"), {"role": "critic", "content": "b"}]),
    case("error_none_content_with_tool_calls", [
        user("a"), assistant(None, tool_calls=[call("a1B2c3D4e", "search", {"query": "x"})])]),
]

MISTRAL_SMALL = [
    case("user_gen_default_system_dated", ONE),
    case("user_no_gen", ONE, gen=False),
    case("system_multi", MULTI),
    case("system_parts", [{"role": "system", "content": parts("Parts system.")}, user("Hi")]),
    case("non_ascii", NON_ASCII),
    case("user_assistant_parts", [
        {"role": "user", "content": [{"type": "text", "text": "What is "}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": parts("A ", "cat.")}, user("Sure?")]),
    case("tools_on_last_user_turn", MISTRAL_TOOL_TURN, tools=TOOLS),
    case("tool_content_object", [
        user("Weather?"), assistant("", tool_calls=[call("a1B2c3D4e", "get_weather", {"location": {"city": "Oslo"}})]),
        {"role": "tool", "tool_call_id": "a1B2c3D4e", "content": {"content": "rain"}}], tools=TOOLS),
    case("error_bad_call_id", [
        user("Weather?"), assistant("", tool_calls=[call("call_1", "get_weather", {"location": {"city": "Oslo"}})])]),
    case("error_roles_must_alternate", [user("a"), user("b")]),
    case("error_unsupported_block", [{"role": "user", "content": [{"type": "audio"}]}]),
]

PHI35 = [
    case("user_gen", ONE),
    case("user_no_gen_appends_eos", ONE, gen=False),
    case("system_multi", MULTI),
    case("system_multi_done_no_gen", MULTI_DONE, gen=False),
    case("empty_system_skipped", [system(""), user("Hi")]),
    case("non_ascii", NON_ASCII),
    case("unknown_role_dropped", [user("Weather?"), {"role": "tool", "content": "sunny"}, user("So?")]),
    case("error_content_parts", [{"role": "user", "content": parts("Hello")}]),
]

PUBLISHED = "published with the model on Hugging Face; copied from llama.cpp models/templates/ at 3f545beccee69d9975f466ec7e45fd9aacd8ba90"

FAMILIES = [
    {"family": "qwen3_5", "template": "qwen3_5.jinja", "source": "Qwen/Qwen3.5-4B chat_template (" + PUBLISHED + ", Qwen3.5-4B.jinja)",
     "special_tokens": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}, "cases": QWEN35},
    {"family": "gemma3", "template": "gemma3.jinja", "source": "google/gemma-3-4b-it tokenizer_config.json chat_template (same text in every gemma-3 *-it model)",
     "special_tokens": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}, "cases": GEMMA3},
    {"family": "ministral3", "template": "ministral3.jinja",
     "source": "mistralai/Ministral-3-14B-Reasoning-2512 chat_template (" + PUBLISHED + ", mistralai-Ministral-3-14B-Reasoning-2512.jinja)",
     "special_tokens": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, "cases": MINISTRAL3},
    {"family": "mistral_small3_2", "template": "mistral_small3_2.jinja",
     "source": "mistralai/Mistral-Small-3.2-24B-Instruct-2506 chat_template (" + PUBLISHED + ", Mistral-Small-3.2-24B-Instruct-2506.jinja)",
     "special_tokens": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, "cases": MISTRAL_SMALL},
    {"family": "phi3_5", "template": "phi3_5.jinja",
     "source": "microsoft/Phi-3.5-mini-instruct chat_template (" + PUBLISHED + ", microsoft-Phi-3.5-mini-instruct.jinja)",
     "special_tokens": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "unk_token": "<unk>"},
     "cases": PHI35},
]
