package exec

import (
	"github.com/helexa/helexa/internal/jinja/nodes"
)

type ControlStructure interface {
	nodes.ControlStructure
	Execute(*Renderer, *nodes.ControlStructureBlock) error
}
