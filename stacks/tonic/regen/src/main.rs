//! `kit-tonic-regen FDS OUT_DIR`: from a file descriptor set of protos/throughput.proto and
//! protos/worker.proto, writes OUT_DIR/kit.throughput.rs (prost messages with bytes::Bytes
//! payloads, the Throughput client and server), OUT_DIR/kit.worker.rs (prost messages) and
//! OUT_DIR/kit.worker.serde.rs (pbjson: protobuf's canonical JSON; unknown fields refused,
//! both name forms read, the .proto's own field names written).
use prost::Message;
use std::process::ExitCode;

fn run(fds_path: &str, out: &str) -> Result<(), String> {
    let bytes = std::fs::read(fds_path).map_err(|e| format!("{fds_path}: {e}"))?;
    let fds = prost_types::FileDescriptorSet::decode(&*bytes)
        .map_err(|e| format!("{fds_path}: not a descriptor set: {e}"))?;
    tonic_prost_build::configure()
        .build_transport(false)
        .bytes(".kit.throughput")
        .out_dir(out)
        .compile_fds(fds)
        .map_err(|e| format!("tonic-prost-build: {e}"))?;
    pbjson_build::Builder::new()
        .register_descriptors(&bytes)
        .map_err(|e| format!("pbjson-build: {e}"))?
        .preserve_proto_field_names()
        .out_dir(out)
        .build(&[".kit.worker"])
        .map_err(|e| format!("pbjson-build: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fds, out] = args.as_slice() else {
        eprintln!("usage: kit-tonic-regen FILE_DESCRIPTOR_SET OUT_DIR");
        return ExitCode::from(2);
    };
    match run(fds, out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kit-tonic-regen: {e}");
            ExitCode::FAILURE
        }
    }
}
