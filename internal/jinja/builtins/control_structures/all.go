// Package controlStructures provides built-in control structure implementations.
package controlStructures

import (
	"github.com/helexa/helexa/internal/jinja/exec"
	"github.com/helexa/helexa/internal/jinja/parser"
)

var All = exec.NewControlStructureSet(map[string]parser.ControlStructureParser{
	"autoescape": autoescapeParser,
	"filter":     filterParser,
	"for":        forParser,
	"if":         ifParser,
	"macro":      macroParser,
	"raw":        rawParser,
	"set":        setParser,
	"with":       withParser,
	"do":         doParser,
	"break":      breakParser,
	"continue":   continueParser,
	"call":       callParser,
})
