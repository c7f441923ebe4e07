// The OpenAI Node SDK's Responses API (client.responses) against a running
// helexa daemon whose model writes a scripted answer (HELEXA_TEST_REPLAY):
// reasoning "The user wants the weather.", text "Let me check." and a
// get_weather call with {"city": "Paris"}. NODE_E2E_BASE_URL (…/v1) and
// NODE_E2E_MODEL come from the Go test. Exits non-zero, naming the failed
// check, when anything is off.
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

async function status(promise) {
  try {
    await promise;
    return { status: 200 };
  } catch (e) {
    return { status: e.status, message: e.message, type: e.type ?? e.error?.type };
  }
}

const tools = [{
  type: "function", name: "get_weather", description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];
const ask = { model, tools, max_output_tokens: 400, temperature: 0 };

// checkAnswer: the scripted answer as output items, output_text and usage.
function checkAnswer(how, r) {
  check(r.object === "response" && r.status === "completed" && r.id.startsWith("resp_"), `${how}: a completed response`, r);
  check(r.output.map((o) => o.type).join(",") === "reasoning,message,function_call", `${how}: output items`, r.output);
  check(r.output_text.trim() === "Let me check.", `${how}: output_text`, r.output_text);
  check(r.output[0].content?.[0]?.text.trim() === "The user wants the weather.", `${how}: reasoning text`, r.output[0]);
  const call = r.output[2];
  let args = null;
  try { args = JSON.parse(call.arguments); } catch { args = null; }
  check(call.name === "get_weather" && args?.city === "Paris" && call.call_id.length > 0 && call.status === "completed",
    `${how}: function call name and arguments`, call);
  const u = r.usage;
  check(u.input_tokens > 0 && u.output_tokens > 0 && u.total_tokens === u.input_tokens + u.output_tokens &&
    u.input_tokens_details.cached_tokens >= 0 && u.input_tokens_details.cached_tokens <= u.input_tokens, `${how}: usage`, u);
  return call;
}

// Not streamed.
const first = await client.responses.create({ ...ask, input: "What is the weather in Paris?", instructions: "Answer briefly." });
const call = checkAnswer("create", first);
check(first.instructions === "Answer briefly." && first.store === true, "create: settings echoed", first);

// Streamed: the raw events, numbered in order.
const stream = await client.responses.create({ ...ask, input: "What is the weather in Paris?", stream: true });
const types = [];
let text = "", reasoning = "", args = "", final = null, seq = 0, seqOK = true;
for await (const ev of stream) {
  types.push(ev.type);
  seqOK &&= ev.sequence_number === seq++;
  if (ev.type === "response.output_text.delta") text += ev.delta;
  if (ev.type === "response.reasoning_text.delta") reasoning += ev.delta;
  if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
  if (ev.type === "response.completed") final = ev.response;
}
check(seqOK && types[0] === "response.created" && types[1] === "response.in_progress" && types.at(-1) === "response.completed",
  "stream: event order and sequence_number", types);
for (const t of ["response.output_item.added", "response.content_part.added", "response.output_text.done",
  "response.function_call_arguments.done", "response.output_item.done"]) {
  check(types.includes(t), `stream: ${t}`, types);
}
check(text.trim() === "Let me check." && reasoning.trim() === "The user wants the weather." && JSON.parse(args).city === "Paris",
  "stream: text, reasoning and arguments deltas", { text, reasoning, args });
checkAnswer("stream: response.completed", { ...final, output_text: text });

// The SDK's stream helper accumulates the events into the final response.
const helper = await client.responses.stream({ ...ask, input: "What is the weather in Paris?" }).finalResponse();
checkAnswer("responses.stream finalResponse", helper);

// A function-call round trip: the output items and the call's result sent back.
const roundTrip = await client.responses.create({
  ...ask,
  input: [{ role: "user", content: "What is the weather in Paris?" }, ...first.output,
    { type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 degrees." }],
});
checkAnswer("function_call_output round trip", roundTrip);
check(roundTrip.usage.input_tokens > first.usage.input_tokens, "round trip: the call and its output are in the prompt",
  [roundTrip.usage, first.usage]);

// previous_response_id: the same conversation, kept by the daemon
// (instructions are not carried over).
const continued = await client.responses.create({
  ...ask, previous_response_id: first.id,
  input: [{ type: "function_call_output", call_id: call.call_id, output: "Sunny, 21 degrees." }],
});
checkAnswer("previous_response_id", continued);
check(continued.previous_response_id === first.id && continued.usage.input_tokens === roundTrip.usage.input_tokens,
  "previous_response_id: the prompt is the round trip's", [continued.usage, roundTrip.usage]);

// Retrieve and delete.
const got = await client.responses.retrieve(first.id);
check(got.id === first.id && got.output_text === first.output_text && got.usage.input_tokens === first.usage.input_tokens,
  "retrieve", got);
await client.responses.delete(first.id);
check((await status(client.responses.retrieve(first.id))).status === 404, "retrieve after delete: 404", null);

// store: false keeps nothing.
const unkept = await client.responses.create({ ...ask, input: "Hi", store: false });
check(unkept.store === false && (await status(client.responses.retrieve(unkept.id))).status === 404, "store: false is not kept", unkept.id);
const cont = await status(client.responses.create({ ...ask, input: "More", previous_response_id: unkept.id }));
check(cont.status === 400 && cont.message.includes("previous_response_id"), "previous_response_id of an unkept response: 400", cont);

// Clear refusals, in OpenAI's error shape.
const image = await status(client.responses.create({
  ...ask, input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/cat.png" }] }],
}));
check(image.status === 400 && image.message.includes("text only") && image.type === "invalid_request_error", "input_image: 400", image);
const schema = await status(client.responses.create({
  ...ask, input: "x", text: { format: { type: "json_schema", name: "w", schema: { type: "object" } } },
}));
check(schema.status === 400 && schema.message.includes("json_schema"), "json_schema: 400", schema);
