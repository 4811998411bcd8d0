//! The tap scanner's rules, shared with the Python line: tests/vectors/scanner.json (written
//! by tests/unit/scanner_vectors.py from kit.capture.scanner), replayed chunk by chunk: the
//! record for the decoder's ring must be the same bytes.
use linkd::tap::scanner::{encode_scanned, DataScanner};
use serde_json::Value;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_chunk_gives_the_reference_record() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/scanner.json");
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in spec["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut scanner = DataScanner::new(case["client_side"].as_bool().unwrap());
        let chunks = case["chunks"].as_array().unwrap();
        for (i, (chunk, want)) in chunks.iter().zip(case["records"].as_array().unwrap()).enumerate() {
            let chunk = hex(chunk.as_str().unwrap());
            let got = match scanner.split(&chunk) {
                Some((carried, pieces)) if !(carried.is_empty() && pieces == [(0, chunk.len())]) => {
                    let data = scanner.take_data();
                    let streams = scanner.take_streams();
                    let span = scanner.span;
                    (
                        "scanned",
                        to_hex(&encode_scanned(&chunk, &carried, &pieces, data, span, &streams)),
                    )
                }
                _ => ("bytes", to_hex(&chunk)),
            };
            assert_eq!(got.0, want[0].as_str().unwrap(), "{name}: chunk {i}: kind");
            assert_eq!(got.1, want[1].as_str().unwrap(), "{name}: chunk {i}: record");
        }
        assert_eq!(
            to_hex(&scanner.take_held()),
            case["held"].as_str().unwrap(),
            "{name}: held"
        );
        assert_eq!(
            scanner.in_data_payload() as u64,
            case["in_data_payload"].as_u64().unwrap(),
            "{name}"
        );
    }
}
