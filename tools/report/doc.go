// Package report renders results — tables as Markdown, CSV or JSON and
// charts as SVG or PNG (gonum/plot). It formats what it is given and
// computes nothing beyond summary statistics such as geometric means.
package report
