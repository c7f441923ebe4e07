// The Anthropic TypeScript SDK as clients really use it, against a running
// helexa daemon whose model writes a scripted answer (HELEXA_TEST_REPLAY):
// reasoning, text, then one get_weather call in the model's own format.
// NODE_E2E_BASE_URL, NODE_E2E_MODEL and NODE_E2E_KEY come from the Go test.
// Exits non-zero, naming the failed check, when anything is off.
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ baseURL: process.env.NODE_E2E_BASE_URL, apiKey: process.env.NODE_E2E_KEY, maxRetries: 0 });
const model = process.env.NODE_E2E_MODEL;

function check(ok, what, detail) {
  if (!ok) {
    console.error(`FAIL ${what}: ${JSON.stringify(detail)}`);
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

const tools = [{
  name: "get_weather", description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];
const ask = { role: "user", content: "What is the weather in Paris?" };

// The scripted answer as content blocks: thinking, text, tool_use.
function checkAnswer(what, m) {
  const [thinking, text, call] = m.content;
  check(m.content.length === 3 && thinking.type === "thinking" && thinking.thinking.trim() === "The user wants the weather." &&
    text.type === "text" && text.text.trim() === "Let me check." &&
    call.type === "tool_use" && call.name === "get_weather" && call.id.startsWith("toolu_") && call.input.city === "Paris" &&
    m.stop_reason === "tool_use" && m.stop_sequence === null && m.role === "assistant" && m.id.startsWith("msg_") &&
    m.usage.input_tokens + m.usage.cache_read_input_tokens > 0 && m.usage.output_tokens > 0, what, m);
}

// Non-streamed, with tools and thinking.
const first = await client.messages.create({
  model, max_tokens: 200, system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
  messages: [ask], tools, tool_choice: { type: "auto" }, thinking: { type: "enabled", budget_tokens: 1024 },
  metadata: { user_id: "node-e2e" }, temperature: 0.2, top_p: 0.9, top_k: 40,
});
checkAnswer("messages: thinking, text and tool_use blocks, stop_reason tool_use", first);
check(first.usage.cache_read_input_tokens === 0, "a first prompt reads nothing from the cache", first.usage);

// count_tokens renders the same prompt.
const counted = await client.messages.countTokens({
  model, system: [{ type: "text", text: "You are terse." }], messages: [ask], tools, thinking: { type: "enabled", budget_tokens: 1024 },
});
check(counted.input_tokens === first.usage.input_tokens, "count_tokens counts the prompt the message used", { counted, usage: first.usage });

// Streamed: the same request, its events, and its prompt now in the prefix cache.
const stream = client.messages.stream({
  model, max_tokens: 200, system: [{ type: "text", text: "You are terse." }], messages: [ask], tools,
  thinking: { type: "enabled", budget_tokens: 1024 },
});
const seen = new Set();
stream.on("streamEvent", (ev) => {
  seen.add(ev.type);
  if (ev.type === "content_block_delta") seen.add(ev.delta.type);
});
let streamedText = "";
stream.on("text", (t) => { streamedText += t; });
const streamed = await stream.finalMessage();
checkAnswer("streamed message, accumulated by the SDK", streamed);
check(streamedText.trim() === "Let me check.", "streamed text events", streamedText);
const want = ["message_start", "content_block_start", "thinking_delta", "text_delta", "input_json_delta", "content_block_stop", "message_delta", "message_stop"];
check(want.every((t) => seen.has(t)), "stream event types", [...seen]);
check(streamed.usage.cache_read_input_tokens > 0 &&
  streamed.usage.input_tokens + streamed.usage.cache_read_input_tokens === counted.input_tokens,
  "a repeated prompt reads its prefix from the cache", streamed.usage);

// The tool round trip: the answer goes back with the tool's result.
const call = first.content.find((b) => b.type === "tool_use");
const second = await client.messages.create({
  model, max_tokens: 200, messages: [ask, { role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "Sunny, 22 °C" }, { type: "text", text: "Thanks." }] }],
  tools,
});
checkAnswer("tool round trip: tool_use and tool_result in the history", second);

// Without tools the call markup is plain text; the budget and stop sequences end the turn.
const plain = await client.messages.create({ model, max_tokens: 200, messages: [ask], thinking: { type: "disabled" } });
check(plain.stop_reason === "end_turn" && plain.content.some((b) => b.type === "text" && b.text.includes("Let me check.")),
  "no tools: end_turn", plain);
const short = await client.messages.create({ model, max_tokens: 3, messages: [ask] });
check(short.stop_reason === "max_tokens" && short.usage.output_tokens === 3, "max_tokens", short);
const stopped = await client.messages.create({ model, max_tokens: 200, messages: [ask], stop_sequences: ["check"] });
const stoppedText = stopped.content.filter((b) => b.type === "text").map((b) => b.text).join("");
check(stopped.stop_reason === "stop_sequence" && stopped.stop_sequence === "check" && stoppedText.trim() === "Let me",
  "stop_sequence", stopped);

// Errors arrive as the SDK's typed errors, with Anthropic's error types.
async function expectError(what, status, type, req, pattern) {
  try {
    const r = await client.messages.create(req);
    check(false, what, r);
  } catch (err) {
    check(err instanceof Anthropic.APIError && err.status === status && err.type === type &&
      (!pattern || pattern.test(err.apiMessage ?? "")), what, { status: err.status, type: err.type, message: err.message });
  }
}
await expectError("unknown model: NotFoundError", 404, "not_found_error", { model: "claude-nonexistent-1", max_tokens: 8, messages: [ask] });
await expectError("no max_tokens: BadRequestError", 400, "invalid_request_error", { model, messages: [ask] }, /max_tokens/);
await expectError("an image: BadRequestError", 400, "invalid_request_error", {
  model, max_tokens: 8, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }],
}, /vision/);
const wrongKey = new Anthropic({ baseURL: process.env.NODE_E2E_BASE_URL, apiKey: "wrong", maxRetries: 0 });
try {
  await wrongKey.messages.create({ model, max_tokens: 8, messages: [ask] });
  check(false, "wrong key", null);
} catch (err) {
  check(err instanceof Anthropic.AuthenticationError && err.type === "authentication_error", "wrong key: AuthenticationError", err.message);
}
