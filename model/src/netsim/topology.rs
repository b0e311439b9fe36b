//! (being written: fat tree, multi-plane, routing)
