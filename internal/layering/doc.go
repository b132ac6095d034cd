// Package layering keeps the module's import graph in the order README.md
// states ("Layout"): its tests read that order and fail when a package
// imports one listed after it, or when the executors (engine, device)
// depend on the planner. It holds no code of its own.
package layering
