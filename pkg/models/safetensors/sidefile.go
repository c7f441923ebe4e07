package safetensors

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/helexa/helexa/internal/fsutil"
)

// Size caps on the JSON and template files beside a checkpoint, each far
// above what real models ship (Gemma 3's tokenizer.json, among the
// largest, is 33 MB).
const (
	MaxConfigBytes          = 4 << 20   // config.json, generation_config.json
	MaxTokenizerBytes       = 128 << 20 // tokenizer.json
	MaxTokenizerConfigBytes = 32 << 20  // tokenizer_config.json
	MaxTemplateBytes        = 4 << 20   // chat_template.jinja, chat_template.json
	MaxIndexBytes           = 64 << 20  // model.safetensors.index.json
)

// SideFileLimit is the size cap of a model directory's file by name
// (MaxConfigBytes for names without their own).
func SideFileLimit(name string) int64 {
	switch name {
	case "tokenizer.json":
		return MaxTokenizerBytes
	case "tokenizer_config.json":
		return MaxTokenizerConfigBytes
	case "chat_template.jinja", "chat_template.json":
		return MaxTemplateBytes
	case IndexName:
		return MaxIndexBytes
	}
	return MaxConfigBytes
}

// ReadSideFile reads dir/name, one of the small files beside a checkpoint
// (config.json, tokenizer.json, ...): a regular file only, checked on the
// descriptor after a non-blocking open (a FIFO or /dev/zero behind a link
// fails at once), at most SideFileLimit(name) bytes. Errors wrap
// fs.ErrNotExist, fsutil.ErrNotRegular or fsutil.ErrTooLarge.
func ReadSideFile(dir, name string) ([]byte, error) {
	return fsutil.ReadRegular(filepath.Join(dir, name), SideFileLimit(name))
}

// CheckSideFiles checks that each of dir's named files that exists is a
// regular file within its cap, for readers that open the files themselves
// (the chat template's). Missing files pass.
func CheckSideFiles(dir string, names ...string) error {
	for _, name := range names {
		if err := fsutil.CheckRegular(filepath.Join(dir, name), SideFileLimit(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
