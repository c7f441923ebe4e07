// Package loader turns a model reference into a loaded engine.Model: it
// resolves the reference through the hub, opens the model's files (a GGUF
// file, or a Hugging Face directory of safetensors weights with its
// tokenizer.json), builds the text side (tokenizer, chat template,
// reasoning and tool-call markers) and starts the executor with the load's
// executor.LoadOptions (Files).
package loader
