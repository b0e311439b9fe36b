//! Host PCIe driver stub for mrc-nic. Empty until the transport core and its register map
//! exist; see README.md for what comes.
