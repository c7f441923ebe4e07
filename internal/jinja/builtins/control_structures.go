package builtins

import controlStructures "github.com/helexa/helexa/internal/jinja/builtins/control_structures"

// ControlStructures exports all builtins controlStructures
var ControlStructures = controlStructures.All
