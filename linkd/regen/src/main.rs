// Usage: kit-linkd-regen DESCRIPTOR_SET OUT_DIR. The messages (prost) and their canonical
// JSON mapping (pbjson: proto field names, unknown fields refused).
use prost::Message;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).expect("read the descriptor set");
    let fds = prost_types::FileDescriptorSet::decode(&*bytes).expect("a descriptor set");
    let out = std::path::Path::new(&args[2]);
    prost_build::Config::new()
        .out_dir(out)
        .compile_fds(fds)
        .expect("prost-build");
    pbjson_build::Builder::new()
        .register_descriptors(&bytes)
        .expect("pbjson descriptors")
        .out_dir(out)
        .preserve_proto_field_names()
        .build(&[".kit.worker"])
        .expect("pbjson-build");
}
