// Package sql92 compiles and evaluates the SQL92 property filter of
// RocketMQ subscriptions (expression type SQL92), with the grammar and
// the evaluation rules of Java's org.apache.rocketmq.filter (SelectorParser
// and the expression classes): see docs/PROTOCOL.md §9.16.
//
// A message matches when the expression evaluates to TRUE over its
// properties, all of which are strings. Comparisons with a missing
// property are unknown (NULL), AND, OR and NOT follow three-valued logic,
// and a value Java cannot convert (a property "abc" compared with 5) makes
// the whole evaluation fail, which Java's broker counts as no match.
//
// CONTAINS, STARTSWITH and ENDSWITH (and their NOT forms) are those of
// RocketMQ 5.x; 4.9.8 has none of them, so there the three words are
// property names, here reserved words.
//
// Compile bounds what a subscriber can make the broker hold: expressions
// longer than MaxLength bytes or nested deeper than MaxDepth are refused.
// Nothing in the package panics on any input.
package sql92
