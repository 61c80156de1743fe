// Package mdtable reads the sections and tables of a Markdown document, so
// that tests can hold the docs equal to the code (flags, metrics, values,
// annotations) with one reader instead of one per test.
package mdtable
