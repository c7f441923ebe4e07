package builtins

import "github.com/helexa/helexa/internal/jinja/exec"

var GlobalVariables = exec.NewContext(map[string]any{
	"gonja": map[string]any{
		"version": "v2.9.1",
	},
})
