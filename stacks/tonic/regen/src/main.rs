use prost::Message;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fds = prost_types::FileDescriptorSet::decode(&*std::fs::read(&args[1]).unwrap()).unwrap();
    tonic_prost_build::configure()
        .build_transport(false)
        .bytes(".")
        .out_dir(&args[2])
        .compile_fds(fds)
        .unwrap();
}
