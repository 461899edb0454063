//! The extension module `dizhu._engine`: the classes and functions of `python` (the rules) and
//! `python_tables` (the environments' tables), registered in one place so that neither of
//! those modules needs the other's names.

use pyo3::prelude::*;

use crate::python::{beats, panic_for_testing, EngineFault, NativeRound, Rules};
use crate::python_tables::{NativeTables, ShardSignals};

#[pymodule(name = "_engine")]
fn engine_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("EngineFault", module.py().get_type::<EngineFault>())?;
    module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<Rules>()?;
    module.add_class::<NativeRound>()?;
    module.add_class::<NativeTables>()?;
    module.add_class::<ShardSignals>()?;
    module.add_function(wrap_pyfunction!(beats, module)?)?;
    module.add_function(wrap_pyfunction!(panic_for_testing, module)?)?;
    Ok(())
}
