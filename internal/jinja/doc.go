// Package jinja is the Jinja template engine helexa owns, for chat
// templates: a fork of github.com/nikolalohinski/gonja/v2 v2.9.1 (MIT
// licence, see LICENSE and AUTHORS in this directory), cut down to what
// chat templates use and changed where they need it.
//
// The subpackages: tokens (the lexer), parser and nodes (the syntax tree,
// with nodes.Transform for typed rewrites), exec (values, the evaluator and
// renderer, and the Budget that bounds a render), builtins (filters, tests,
// global functions, control structures, str/list/dict methods), config,
// loaders (templates from strings only), errs (error helpers and
// LimitError).
//
// Changes from gonja v2.9.1: no file-system or embed loaders and no
// include, import, from, extends, block or trans; no logrus or pkg/errors;
// Python string-literal escapes; conditional expressions wherever an
// expression nests, and set … if without else; the none literal; method
// calls on parenthesised expressions keep their receiver; nesting bounded
// at parse time (parser.DefaultMaxDepth); call depth, loop iterations,
// output bytes and cancellation bounded at render time (exec.Budget);
// range() sized before it is built, and slices iterated lazily; only
// namespaces accept attribute assignment, never making a cycle; padding
// widths bounded (errs.MaxWidth); comparison tests and str.center/ljust/
// rjust/expandtabs fixed.
package jinja
