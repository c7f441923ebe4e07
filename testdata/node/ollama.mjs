// The ollama JavaScript client (0.6.4) as applications use it, against a
// running helexa daemon. The Go test (cmd/helexa/ollama_node_e2e_test.go)
// runs it in two modes (NODE_E2E_MODE):
//   - "api": NODE_E2E_HOST (http://host:port), the model's Hub reference
//     NODE_E2E_REF and its alias NODE_E2E_ALIAS (in the daemon's alias
//     table), and NODE_E2E_TEXT, what the model writes (the daemon replays
//     it): version, pull, list, chat, generate, embed, show, ps, delete.
//   - "tools": NODE_E2E_HOST and a model NODE_E2E_REF whose replayed answer
//     is reasoning and a get_weather call for Paris: thinking and tool calls
//     in ollama's shape, streamed and not, and a tool result sent back.
// Exits non-zero, naming the failed check, when anything is off.
import { Ollama } from "ollama";

const ollama = new Ollama({ host: process.env.NODE_E2E_HOST });
const ref = process.env.NODE_E2E_REF;
const alias = process.env.NODE_E2E_ALIAS;
// A SentencePiece vocabulary (the fixture's) spells the text's first word
// with its leading space, so answers are compared trimmed.
const text = process.env.NODE_E2E_TEXT;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

if (process.env.NODE_E2E_MODE === "tools") {
  await toolChecks();
  process.exit(0);
}

const version = await ollama.version();
check(typeof version.version === "string" && version.version.length > 0, "version", version);

// pull from the (test) Hub, with progress in ollama's status records.
const statuses = [];
let sawBytes = false;
for await (const p of await ollama.pull({ model: ref, stream: true })) {
  statuses.push(p.status);
  if (p.total > 0 && p.completed === p.total) sawBytes = true;
}
check(statuses[0] === "pulling manifest" && statuses.at(-1) === "success" && statuses.some((s) => s.startsWith("pulling ")) && sawBytes,
  "pull streams ollama's status records", statuses);

const tags = await ollama.list();
const listed = tags.models.find((m) => m.name === ref);
check(listed !== undefined && listed.model === ref && listed.size > 0 && listed.details.format === "gguf" &&
  listed.details.family === "llama" && listed.details.parameter_size !== "" && listed.details.quantization_level === "Q8_0",
  "list names the pulled model with its details", tags);
const aliased = tags.models.find((m) => m.name === alias);
check(aliased !== undefined && aliased.digest === listed.digest && aliased.details.family === "llama",
  "list names the model by its alias too", tags);

// chat by the alias (an ollama-style name), not streamed.
const chat = await ollama.chat({ model: alias, messages: [{ role: "user", content: "Tell me a story." }], options: { temperature: 0, num_predict: 64 } });
check(chat.message.role === "assistant" && chat.message.content.trim() === text && chat.done === true && chat.done_reason === "stop" &&
  chat.eval_count > 0 && chat.prompt_eval_count > 0 && chat.total_duration > 0 && chat.model === alias,
  "chat (not streamed)", chat);

// chat streamed: the parts add up to the same message; the last is done.
let streamed = "";
let last = null;
for await (const part of await ollama.chat({ model: alias, messages: [{ role: "user", content: "Again." }], stream: true, options: { num_predict: 64 } })) {
  streamed += part.message.content;
  last = part;
}
check(streamed === chat.message.content && last.done === true && last.done_reason === "stop" && last.eval_count === chat.eval_count,
  "chat (streamed)", { streamed, last });

const gen = await ollama.generate({ model: ref, prompt: "Once upon a time", system: "Be brief.", options: { num_predict: 64, seed: 7 } });
check(gen.response.trim() === text && gen.done === true && gen.done_reason === "stop" && gen.eval_count > 0, "generate", gen);

const limited = await ollama.generate({ model: ref, prompt: "Once upon a time", raw: true, options: { num_predict: 2 } });
check(limited.done_reason === "length" && limited.eval_count === 2, "generate raw with num_predict", limited);

const emb = await ollama.embed({ model: ref, input: ["Once upon a time", "The cat sat"] });
const norm = Math.hypot(...emb.embeddings[0]);
check(emb.embeddings.length === 2 && emb.embeddings[0].length > 0 && Math.abs(norm - 1) < 1e-3, "embed", { n: emb.embeddings.length, norm });

const show = await ollama.show({ model: ref });
check(show.details.family === "llama" && show.details.format === "gguf" && show.capabilities.includes("completion") &&
  show.model_info["general.architecture"] === "llama" && typeof show.template === "string",
  "show", { details: show.details, capabilities: show.capabilities, model_info: show.model_info });

const ps = await ollama.ps();
const running = ps.models.find((m) => m.name === ref);
check(running !== undefined && running.model === ref && running.size > 0 && running.details.family === "llama" &&
  running.context_length > 0 && ps.models.some((m) => m.name === alias), "ps", ps);

let refused = null;
try {
  await ollama.chat({ model: ref, messages: [{ role: "user", content: "Look.", images: ["aGk="] }] });
} catch (e) {
  refused = e;
}
check(refused !== null && refused.status_code === 400 && /text only/.test(refused.error), "images are refused clearly", String(refused));

await ollama.delete({ model: ref });
const after = await ollama.list();
check(!after.models.some((m) => m.name === ref || m.name === alias), "delete removes the model from the list", after);

async function toolChecks() {
  const tools = [{ type: "function", function: { name: "get_weather", description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
  const messages = [{ role: "user", content: "Weather in Paris?" }];
  const isParisCall = (calls) => Array.isArray(calls) && calls.length === 1 &&
    calls[0].function.name === "get_weather" && calls[0].function.arguments.city === "Paris";

  const r = await ollama.chat({ model: ref, messages, tools, think: true, options: { num_predict: 200 } });
  check(isParisCall(r.message.tool_calls) && r.message.thinking.includes("weather") && r.done_reason === "stop" &&
    !r.message.content.includes("tool_call"), "chat: thinking and a tool call in ollama's shape", r);

  let thinking = "";
  const calls = [];
  for await (const part of await ollama.chat({ model: ref, messages, tools, think: true, stream: true, options: { num_predict: 200 } })) {
    thinking += part.message.thinking ?? "";
    calls.push(...(part.message.tool_calls ?? []));
  }
  check(isParisCall(calls) && thinking === r.message.thinking, "chat streamed: thinking and a tool call", { thinking, calls });

  const followUp = await ollama.chat({ model: ref, tools, options: { num_predict: 200 }, messages: [...messages,
    { role: "assistant", content: "", thinking: r.message.thinking, tool_calls: r.message.tool_calls },
    { role: "tool", content: "18 degrees and sunny", tool_name: "get_weather" }] });
  check(followUp.done === true && followUp.prompt_eval_count > r.prompt_eval_count, "a tool result goes back to the model", followUp);

  const show = await ollama.show({ model: ref });
  check(show.capabilities.includes("tools") && show.capabilities.includes("thinking"), "show: tools and thinking capabilities", show.capabilities);
}
