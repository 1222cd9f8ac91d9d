//! Sandbox: filesystem zones resolved by the kernel beneath their roots, and the process jail.
//!
//! Not built yet: the zones issue (#5) and the jail issue (#6) bring this crate to life.
