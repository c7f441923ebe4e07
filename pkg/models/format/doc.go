// Package format owns each model's output format: how its generated text
// marks reasoning (<think>…</think>, [THINK]…[/THINK], GPT-OSS channels,
// ...) and tool calls (one Family per template family, the generic Parser
// otherwise), the marker texts a decoder must render for them, and the
// incremental parsers that turn generated text into reasoning, content and
// structured tool calls.
//
// Detect chooses a model's Format once, from its chat template and
// vocabulary; Format.NewParser starts the parser of one generation. Every
// parser takes any split of the text (markers cut across pushes, one byte
// at a time) and returns the same result as for the whole text at once.
package format
