import json, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.ext import loopcontrols
from jinja2.exceptions import TemplateError
def raise_exception(m): raise TemplateError(m)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
t = env.from_string(open(sys.argv[1]).read())
msgs = json.load(open(sys.argv[2]))
tools = json.load(open(sys.argv[3])) if len(sys.argv) > 3 and sys.argv[3] else None
sys.stdout.write(t.render(messages=msgs, tools=tools, documents=None, add_generation_prompt=True, bos_token="<bos>", eos_token="</s>"))
