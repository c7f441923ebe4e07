#!/usr/bin/env python3
"""Render the published chat templates of the newer families into goldens.

Templates live in pkg/models/chat/testdata/families/ (see the README there for
where each one was published). Each is rendered over a set of conversations
that exercise what that template supports (system prompts, multi-turn,
reasoning, tool definitions / calls / results, content given as a list of
parts, the template's own raise_exception paths) in Hugging Face
transformers' Jinja environment: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks and loopcontrols, raise_exception, strftime_now
(pinned to --now), and tojson as transformers defines it (ensure_ascii=False,
indent/separators/sort_keys passed through). The special tokens are each
family's own, from its tokenizer_config.json.

Usage (from the repository root; Python 3 with jinja2 3.1.6):

    python3 scripts/templategold/gen.py [--now 2025-07-26T14:05:09]

writes pkg/models/chat/testdata/families/<family>.json. The output is
committed; `go test ./pkg/models/chat -run TestFamilyGoldens` checks it.
"""

import argparse
import datetime
import json
import os
import sys

import jinja2
from jinja2.exceptions import TemplateError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gen_chat_corpus import environment  # noqa: E402  (same environment as the corpus)

from cases import FAMILIES  # noqa: E402

OUT = os.path.join("pkg", "models", "chat", "testdata", "families")
COMMAND = "python3 scripts/templategold/gen.py --now %s"


def render(tpl, case, special):
    kwargs = dict(special)
    kwargs.update(case.get("kwargs", {}))
    try:
        return {"expected": tpl.render(messages=json.loads(json.dumps(case["messages"])),
                                       tools=case.get("tools"), documents=None, **kwargs)}
    except TemplateError as e:
        if type(e) is TemplateError:  # the template's own raise_exception
            return {"expected_error": str(e)}
        return {"expected_error_type": type(e).__name__, "expected_error": str(e)}
    except Exception as e:  # TypeError and the like raised by Python inside the template
        return {"expected_error_type": type(e).__name__, "expected_error": str(e)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--now", default="2025-07-26T14:05:09", help="strftime_now's fixed instant (naive local time)")
    args = ap.parse_args()
    now = datetime.datetime.fromisoformat(args.now)
    env = environment()
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    total = 0
    for fam in FAMILIES:
        with open(os.path.join(OUT, fam["template"]), encoding="utf-8") as f:
            tpl = env.from_string(f.read())
        cases = []
        for case in fam["cases"]:
            kwargs = dict(fam["special_tokens"])
            kwargs.update(case.get("kwargs", {}))
            out = {"name": case["name"], "messages": case["messages"], "tools": case.get("tools"), "kwargs": kwargs}
            out.update(render(tpl, case, fam["special_tokens"]))
            cases.append(out)
        golden = {
            "family": fam["family"],
            "template": fam["template"],
            "source": fam["source"],
            "jinja2": jinja2.__version__,
            "strftime_now": now.isoformat(),
            "command": COMMAND % now.isoformat(),
            "cases": cases,
        }
        path = os.path.join(OUT, fam["family"] + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, indent=1)
            f.write("\n")
        total += len(cases)
        print("%-18s %2d cases -> %s" % (fam["family"], len(cases), path))
    print("%d families, %d cases" % (len(FAMILIES), total))


if __name__ == "__main__":
    main()
