//! The jobs (protos/worker.proto) as the programs receive them: the arguments, the bytes, and
//! the decoding, which is pbjson's generated serde code over serde_json (protobuf's canonical
//! JSON: an unknown field, a wrong type, a duplicate field or a second member of a oneof is
//! the library's error). Nothing here knows the kit's ranges or defaults: a program checks
//! only what the library checks, plus what it needs to act on the job.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use serde::de::DeserializeOwned;

use crate::pb::worker::{client_job, ClientJob, ServerJob};

/// Why a program will not run a job: one line of text, exit 2.
pub type Refusal = String;

/// What the arguments ask for.
#[derive(Debug, PartialEq)]
pub enum Args {
    /// `--config JSON` or `--config=JSON`: the job's text.
    Config(String),
    /// `--worker` (a client only): one job per line of stdin.
    Worker,
}

/// The arguments after the program's name, raw (`std::env::args_os().skip(1)`): `who` is
/// "tonic client" / "tonic server", `record` the job's message name for the usage line.
pub fn parse_args(
    args: &[OsString],
    who: &str,
    record: &str,
    worker: bool,
) -> Result<Args, Refusal> {
    let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let text = match bytes.as_slice() {
        [one] if worker && *one == b"--worker" => return Ok(Args::Worker),
        [one] if one.starts_with(b"--config=") => &one[b"--config=".len()..],
        [flag, text] if *flag == b"--config" => *text,
        _ => {
            let alt = if worker { " or --worker" } else { "" };
            return Err(format!(
                "{who}: usage: --config '<{record} as JSON>'{alt} (got {} argument(s))",
                args.len()
            ));
        }
    };
    match std::str::from_utf8(text) {
        Ok(t) => Ok(Args::Config(t.to_string())),
        Err(_) => Err(format!("{who}: --config: not UTF-8")),
    }
}

/// A worker's line (bytes up to and with its newline): its text, None for a blank line.
pub fn worker_line(bytes: &[u8], who: &str) -> Result<Option<String>, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{who}: worker line: not UTF-8"))?;
    if text.trim().is_empty() {
        Ok(None)
    } else {
        Ok(Some(text.to_string()))
    }
}

/// A job from its JSON: serde_json reads the text, pbjson's generated code the message; the
/// error is theirs, after the path of the field it is about (`download.streams: ...`).
fn decode<T: DeserializeOwned>(text: &str, who: &str) -> Result<T, Refusal> {
    let mut de = serde_json::Deserializer::from_str(text);
    let job: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." || path == "?" {
            String::new()
        } else {
            format!("{path}: ")
        };
        format!("{who}: bad job: {at}{}", e.inner())
    })?;
    de.end().map_err(|e| format!("{who}: bad job: {e}"))?;
    Ok(job)
}

/// What a client is asked to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Work {
    Download(crate::pb::worker::Download),
    Unary(crate::pb::worker::Unary),
    Upload(crate::pb::worker::Upload),
}

/// A client job with its work, which it must have.
#[derive(Clone, Debug)]
pub struct Client {
    pub job: ClientJob,
    pub work: Work,
    pub target_port: u16,
}

pub fn client_job(text: &str, who: &str) -> Result<Client, Refusal> {
    let job: ClientJob = decode(text, who)?;
    let work = match job.work {
        Some(client_job::Work::Download(d)) => Work::Download(d),
        Some(client_job::Work::Unary(u)) => Work::Unary(u),
        Some(client_job::Work::Upload(u)) => Work::Upload(u),
        None => {
            return Err(format!(
                "{who}: bad job: no work in it (download, unary or upload)"
            ))
        }
    };
    let target_port = port(job.target_port, "target_port", who)?;
    if job.connections == 0 {
        return Err(format!(
            "{who}: bad job: connections is 0; a client needs one at least"
        ));
    }
    Ok(Client {
        job,
        work,
        target_port,
    })
}

/// A server job with its port as a TCP port.
#[derive(Clone, Debug)]
pub struct Server {
    pub job: ServerJob,
    pub listen_port: u16,
}

pub fn server_job(text: &str, who: &str) -> Result<Server, Refusal> {
    let job: ServerJob = decode(text, who)?;
    let listen_port = port(job.listen_port, "listen_port", who)?;
    Ok(Server { job, listen_port })
}

fn port(n: u32, name: &str, who: &str) -> Result<u16, Refusal> {
    u16::try_from(n).map_err(|_| format!("{who}: bad job: {name} {n} is not a TCP port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHO: &str = "tonic client";

    fn os(args: &[&[u8]]) -> Vec<OsString> {
        use std::os::unix::ffi::OsStringExt;
        args.iter()
            .map(|a| OsString::from_vec(a.to_vec()))
            .collect()
    }

    #[test]
    fn arguments() {
        let got = |a: &[&[u8]]| parse_args(&os(a), WHO, "ClientJob", true);
        assert_eq!(got(&[b"--config", b"{}"]), Ok(Args::Config("{}".into())));
        assert_eq!(got(&[b"--config={}"]), Ok(Args::Config("{}".into())));
        assert_eq!(got(&[b"--worker"]), Ok(Args::Worker));
        assert_eq!(
            got(&[b"--config", b"{\"target_host\": \"127.0.0.\xff\"}"]),
            Err("tonic client: --config: not UTF-8".into())
        );
        assert_eq!(
            got(&[b"--config=\xff"]),
            Err("tonic client: --config: not UTF-8".into())
        );
        for bad in [
            &[][..],
            &[&b"--config"[..]],
            &[b"--config", b"{}", b"x"],
            &[b"\xff"],
        ] {
            let e = got(bad).unwrap_err();
            assert!(
                e.starts_with("tonic client: usage: --config '<ClientJob as JSON>' or --worker"),
                "{e}"
            );
        }
        let server = parse_args(&os(&[b"--worker"]), "tonic server", "ServerJob", false);
        assert!(server.unwrap_err().contains("usage"));
    }

    #[test]
    fn worker_lines() {
        assert_eq!(worker_line(b"  \n", WHO), Ok(None));
        assert_eq!(worker_line(b"{}\n", WHO), Ok(Some("{}\n".into())));
        assert_eq!(
            worker_line(b"{\"a\": \"\xff\"}\n", WHO),
            Err("tonic client: worker line: not UTF-8".into())
        );
    }

    #[test]
    fn the_example_jobs_decode() {
        let j = client_job(
            r#"{"target_host": "127.0.0.1", "target_port": 50051, "connections": 2, "warmup": true,
            "timeout_s": 60.0, "message_bytes": 262144, "download": {"streams": 4, "timed_s": 2.0,
            "messages_per_stream": "32", "slow_streams": 1, "pacing": {"rate_bytes_s": 1000000.0,
            "jitter": 0.5, "seed": "1"}}}"#,
            WHO,
        )
        .unwrap();
        assert_eq!(
            (j.target_port, j.job.connections, j.job.message_bytes),
            (50051, 2, 262144)
        );
        let Work::Download(d) = j.work else {
            panic!("{:?}", j.work)
        };
        assert_eq!(
            (d.streams, d.messages_per_stream, d.slow_streams),
            (4, 32, 1)
        );
        assert_eq!(
            d.pacing.map(|p| (p.rate_bytes_s, p.jitter, p.seed)),
            Some((1e6, 0.5, 1))
        );
        // camelCase names and 64-bit integers as numbers are canonical JSON too
        let j = client_job(
            r#"{"targetHost": "::1", "targetPort": 1, "connections": 1,
            "windows": {"static": true, "streamBytes": 65536, "conn_bytes": 131072},
            "options": [{"name": "tcp_nodelay", "flag": false}, {"name": "max_frame_size", "int": 32768}],
            "upload": {"timed_s": 2, "messages": 3, "call_timeout_s": 7}}"#,
            WHO,
        )
        .unwrap();
        assert_eq!(j.job.target_host, "::1");
        assert_eq!(
            j.job
                .windows
                .map(|w| (w.r#static, w.stream_bytes, w.conn_bytes)),
            Some((true, 65536, 131072))
        );
        assert_eq!(j.job.options.len(), 2);
        assert!(matches!(j.work, Work::Upload(u) if u.messages == 3 && u.call_timeout_s == 7.0));
        let s = server_job(
            r#"{"listen_host": "127.0.0.1", "options": [{"name": "max_concurrent_streams", "int": "100"},
            {"name": "tcp_nodelay", "flag": true}], "download_budget_bytes": "268435456",
            "shared_message_max_bytes": "16777216", "message_cache_bytes": "67108864",
            "max_message_bytes": "67108864", "max_echo_bytes": "1048576",
            "max_concurrent_streams": 1032, "workers": 1032}"#,
            "tonic server",
        )
        .unwrap();
        assert_eq!(
            (
                s.listen_port,
                s.job.download_budget_bytes,
                s.job.max_concurrent_streams
            ),
            (0, 256 << 20, 1032)
        );
    }

    #[test]
    fn bad_jobs_are_the_librarys_errors() {
        let good = r#""target_port": 1, "connections": 1, "unary": {"calls": 1}"#;
        let cases = [
            (format!("{{{good}, \"nonsense\": 1}}"), "nonsense: unknown field `nonsense`, expected one of"),
            (r#"{"target_port": "eighty", "unary": {}}"#.into(), "target_port: invalid digit found in string at line 1 column 24"),
            (r#"{"connections": -1, "unary": {}}"#.into(), "connections: "),
            (r#"{"target_port": 1, "download": {"streams": 1}, "windows": {"static": "yes"}}"#.into(), "windows.static: invalid type: string \"yes\", expected a boolean"),
            ("{not json".into(), "key must be a string at line 1 column 2"),
            (r#"{"target_port": 1} trailing"#.into(), "trailing characters at line 1 column 20"),
            (r#"{"target_port": 1, "connections": 1}"#.into(), "no work in it (download, unary or upload)"),
            (format!("{{{good}, \"download\": {{}}}}"), "duplicate field `download`"),
            (r#"{"target_port": 70000, "connections": 1, "unary": {}}"#.into(), "target_port 70000 is not a TCP port"),
            (r#"{"target_port": 1, "connections": 0, "unary": {}}"#.into(), "connections is 0; a client needs one at least"),
            (r#"{"target_port": 1, "connections": 1, "options": [{"name": "x", "int": 1, "flag": true}], "unary": {}}"#.into(), "options[0]: duplicate field `flag`"),
        ];
        for (text, says) in cases {
            let e = client_job(&text, WHO).unwrap_err();
            assert!(
                e.starts_with(&format!("tonic client: bad job: {says}")),
                "{text}: {e}"
            );
        }
        let e = server_job(r#"{"listen_port": -1}"#, "tonic server").unwrap_err();
        assert!(e.starts_with("tonic server: bad job: listen_port: "), "{e}");
        let e = server_job(r#"{"listen_port": 1, "nonsense": 1}"#, "tonic server").unwrap_err();
        assert!(
            e.starts_with("tonic server: bad job: nonsense: unknown field `nonsense`"),
            "{e}"
        );
    }
}
