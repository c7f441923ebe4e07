package builtins

import (
	methods "github.com/helexa/helexa/internal/jinja/builtins/methods"
	"github.com/helexa/helexa/internal/jinja/exec"
)

// Methods exports all builtins methods.
var Methods exec.Methods = methods.All
