#!/usr/bin/env python3
"""Generate helexa's chat-template conformance corpus.

Copies every template under llama.cpp's models/templates/ (at the pinned
commit) into pkg/models/chat/testdata/corpus/templates/ and renders each one
with a fixed set of conversations in Hugging Face transformers' Jinja
environment (see shared/fixtures/README.md section 4), writing the goldens to
pkg/models/chat/testdata/corpus/goldens.json.

Usage (from the repository root; needs Python 3 with jinja2 3.1.6 and git):

    python3 scripts/gen_chat_corpus.py [LLAMA_CPP_GIT_DIR]

LLAMA_CPP_GIT_DIR defaults to /work/.mirror/ngxson+llama.cpp/repo. The output
is committed: CI never runs this script.
"""

import datetime
import json
import os
import subprocess
import sys

import jinja2
from jinja2.exceptions import TemplateError
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2 import nodes

COMMIT = "3f545beccee69d9975f466ec7e45fd9aacd8ba90"
SOURCE = "https://github.com/ngxson/llama.cpp (mirror of ggml-org/llama.cpp)"
OUT = os.path.join("pkg", "models", "chat", "testdata", "corpus")
# strftime_now is pinned so the goldens are stable; the Go test pins the same instant.
PINNED_NOW = datetime.datetime(2025, 7, 26, 14, 5, 9)
SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}


class GenerationExtension(Extension):
    """transformers' {% generation %} block: renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return PINNED_NOW.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, GenerationExtension]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "object",
                    "description": "Where to look.",
                    "properties": {
                        "city": {"type": "string"},
                        "country": {"type": "string", "description": "ISO code"},
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                },
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["location"],
            "additionalProperties": False,
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
            "properties": {
                "query": {"type": "string"},
                "filters": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["query"],
        },
    },
}
TOOLS = [WEATHER, SEARCH]


def call(cid, name, args, as_string):
    return {
        "id": cid,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False) if as_string else args},
    }


def tool_turn(as_string):
    args = {"location": {"city": "Paris", "country": "FR"}, "unit": "celsius"}
    return [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call("call0A1b2", "get_weather", args, as_string)]},
        {"role": "tool", "tool_call_id": "call0A1b2", "name": "get_weather", "content": "{\"temp\": 21, \"sky\": \"clear\"}"},
        {"role": "assistant", "content": "It is 21 °C and clear in Paris."},
        {"role": "user", "content": "Thanks!"},
    ]


CONVERSATIONS = {
    "one_turn": [{"role": "user", "content": "Hello"}],
    "system_multi": [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "And 3+3?"},
    ],
    "non_ascii": [
        {"role": "user", "content": "你好，世界！ Привет 👩‍👩‍👧‍👦 café"},
        {"role": "assistant", "content": "こんにちは 🙂"},
        {"role": "user", "content": "  leading and trailing spaces \n\n\ttab\n"},
    ],
    "tools": [
        {"role": "system", "content": "You can call tools."},
        {"role": "user", "content": "Weather in Paris, please."},
    ],
    "tool_call_object": tool_turn(False),
    "tool_call_string": tool_turn(True),
    "parallel_calls": [
        {"role": "user", "content": "Weather in Paris and search for museums."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                call("call0A1b2", "get_weather", {"location": {"city": "Paris"}}, False),
                call("call3C4d5", "search", {"query": "museums in Paris", "filters": ["open now"]}, False),
            ],
        },
        {"role": "tool", "tool_call_id": "call0A1b2", "name": "get_weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call3C4d5", "name": "search", "content": "Louvre, Orsay"},
        {"role": "assistant", "content": "Sunny; try the Louvre."},
        {"role": "user", "content": "Great."},
    ],
    "reasoning_history": [
        {"role": "user", "content": "Is 17 prime?"},
        {"role": "assistant", "reasoning_content": "17 has no divisors but 1 and itself.", "content": "Yes."},
        {"role": "user", "content": "And 21?"},
    ],
    "think_in_content": [
        {"role": "user", "content": "Is 9 prime?"},
        {"role": "assistant", "content": "<think>\n9 = 3*3.\n</think>\n\nNo."},
        {"role": "user", "content": "Why?"},
    ],
}

# (conversation, uses tools, add_generation_prompt, extra kwargs)
CASES = [
    ("one_turn", False, True, {}),
    ("one_turn", False, False, {}),
    ("one_turn", False, True, {"enable_thinking": False}),
    ("one_turn", False, True, {"enable_thinking": True}),
    ("system_multi", False, True, {}),
    ("system_multi", False, False, {}),
    ("non_ascii", False, True, {}),
    ("tools", True, True, {}),
    ("tool_call_object", True, True, {}),
    ("tool_call_string", True, True, {}),
    ("parallel_calls", True, True, {}),
    ("reasoning_history", False, True, {}),
    ("reasoning_history", False, True, {"enable_thinking": False}),
    ("think_in_content", False, True, {}),
]


def case_name(conv, tools, gen, extra):
    name = conv + ("" if gen else "/no_gen")
    for k, v in sorted(extra.items()):
        name += "/%s=%s" % (k, json.dumps(v))
    return name


def git_show(gitdir, path):
    return subprocess.run(
        ["git", "-C", gitdir, "show", "%s:%s" % (COMMIT, path)], check=True, capture_output=True
    ).stdout


def main():
    gitdir = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/ngxson+llama.cpp/repo"
    names = subprocess.run(
        ["git", "-C", gitdir, "ls-tree", "--name-only", COMMIT, "models/templates/"],
        check=True, capture_output=True, text=True,
    ).stdout.split()
    names = sorted(n for n in names if n.endswith(".jinja"))
    tdir = os.path.join(OUT, "templates")
    os.makedirs(tdir, exist_ok=True)
    env = environment()
    goldens = {
        "source": SOURCE,
        "commit": COMMIT,
        "path": "models/templates/",
        "jinja2": jinja2.__version__,
        "strftime_now": PINNED_NOW.isoformat(),
        "special_tokens": SPECIAL,
        "tools": TOOLS,
        "conversations": CONVERSATIONS,
        "templates": [],
    }
    for path in names:
        raw = git_show(gitdir, path)
        base = os.path.basename(path)
        with open(os.path.join(tdir, base), "wb") as f:
            f.write(raw)
        entry = {"file": base, "cases": []}
        try:
            tpl = env.from_string(raw.decode("utf-8"))
        except Exception as e:  # a template Jinja itself cannot parse
            entry["compile_error"] = "%s: %s" % (type(e).__name__, e)
            goldens["templates"].append(entry)
            continue
        for conv, tools, gen, extra in CASES:
            kwargs = dict(SPECIAL)
            kwargs.update(extra)
            case = {"name": case_name(conv, tools, gen, extra), "conversation": conv, "tools": tools,
                    "add_generation_prompt": gen, "kwargs": extra}
            try:
                case["expected"] = tpl.render(
                    messages=json.loads(json.dumps(CONVERSATIONS[conv])),
                    tools=TOOLS if tools else None,
                    documents=None,
                    add_generation_prompt=gen,
                    **kwargs,
                )
            except TemplateError as e:
                if type(e) is TemplateError:
                    case["expected_error"] = str(e)
                else:
                    case["expected_error_type"] = type(e).__name__
                    case["expected_error"] = str(e)
            except Exception as e:  # TypeError and the like raised by Python inside the template
                case["expected_error_type"] = type(e).__name__
                case["expected_error"] = str(e)
            entry["cases"].append(case)
        goldens["templates"].append(entry)
    with open(os.path.join(OUT, "goldens.json"), "w", encoding="utf-8") as f:
        json.dump(goldens, f, ensure_ascii=False, indent=1)
        f.write("\n")
    total = sum(len(t["cases"]) for t in goldens["templates"])
    print("%d templates, %d cases -> %s" % (len(names), total, OUT))


if __name__ == "__main__":
    main()
