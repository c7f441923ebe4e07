// The OpenAI Node SDK as clients really use it, against a running helexa
// daemon: NODE_E2E_BASE_URL (…/v1) and NODE_E2E_MODEL come from the Go test.
// Exits non-zero, naming the failed check, when anything is off.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.NODE_E2E_BASE_URL, apiKey: "unused", maxRetries: 0 });
const model = process.env.NODE_E2E_MODEL;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

const chat = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: [{ type: "text", text: "Tell me" }, { type: "text", text: "a story." }] }],
  max_tokens: 6, temperature: 0,
  store: false, metadata: { run: "node-e2e" }, reasoning_effort: "low", user: "tester",
});
check(chat.choices.length === 1 && chat.choices[0].message.content.length > 0, "content parts, store/metadata/reasoning_effort", chat);

const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object" } } },
];
for (const [what, tool_choice, want] of [
  ["tool_choice required", "required", null],
  ["tool_choice named", { type: "function", function: { name: "get_time" } }, "get_time"],
]) {
  const r = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "What time is it?" }], tools, tool_choice, max_tokens: 48, temperature: 0,
  });
  const calls = r.choices[0].message.tool_calls ?? [];
  let args = null;
  try { args = JSON.parse(calls[0]?.function?.arguments ?? "x"); } catch { args = null; }
  // A call the token budget closed says "length", one the model closed "tool_calls".
  check(calls.length === 1 && ["tool_calls", "length"].includes(r.choices[0].finish_reason) && args !== null &&
    (want === null || calls[0].function.name === want), what, r);
}

const stream = await client.chat.completions.create({
  model, messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }], max_tokens: 4, temperature: 0, stream: true,
});
let streamed = "";
for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
check(streamed.length > 0, "streamed chat", streamed);

const comp = await client.completions.create({ model, prompt: ["Once upon a time", "The dog"], max_tokens: 4, temperature: 0 });
check(comp.choices.length === 2 && comp.choices[1].index === 1, "prompt array", comp);

const emb = await client.embeddings.create({ model, input: ["Once upon a time", "The cat sat"] });
const norm = Math.hypot(...emb.data[0].embedding);
check(emb.data.length === 2 && Math.abs(norm - 1) < 1e-3, "embeddings (the SDK asks for base64)", { n: emb.data.length, norm });
