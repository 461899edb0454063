// Generates the dizhu.v1 client stubs from ../../proto with tonic-prost-build, which runs
// protoc ($PROTOC, else protoc on the PATH: Debian's protobuf-compiler).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    tonic_prost_build::configure()
        .build_server(false)
        .compile_protos(
            &[
                "../../proto/dizhu/v1/table_service.proto",
                "../../proto/dizhu/v1/rules_service.proto",
            ],
            &["../../proto"],
        )?;
    println!("cargo:rerun-if-changed=../../proto/dizhu/v1");
    Ok(())
}
