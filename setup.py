"""The native engine (native/, docs/engine.md): built as dizhu._engine where Rust's cargo exists.

Everything else about the package is declared in pyproject.toml. The extension is optional:
without cargo the build says so and installs the pure-Python rules core alone.
"""

from setuptools import setup
from setuptools_rust import Binding, RustExtension

setup(
    rust_extensions=[
        RustExtension(
            "dizhu._engine",
            path="native/Cargo.toml",
            binding=Binding.PyO3,
            features=["python"],
            py_limited_api="auto",
            optional=True,
            # Release even for editable installs (setuptools-rust builds those in debug by default):
            # a debug build is several times slower than the pure-Python core it replaces.
            debug=False,
        )
    ],
    # One wheel for CPython 3.11 and later (PyO3's abi3: the stable ABI).
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
