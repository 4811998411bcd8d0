impl serde::Serialize for ClientAnswer {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.result.is_some() {
            len += 1;
        }
        if self.client_trial != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ClientAnswer", len)?;
        if let Some(v) = self.result.as_ref() {
            struct_ser.serialize_field("result", v)?;
        }
        if self.client_trial != 0 {
            struct_ser.serialize_field("client_trial", &self.client_trial)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ClientAnswer {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "result",
            "client_trial",
            "clientTrial",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Result,
            ClientTrial,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "result" => Ok(GeneratedField::Result),
                            "clientTrial" | "client_trial" => Ok(GeneratedField::ClientTrial),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ClientAnswer;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ClientAnswer")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ClientAnswer, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut result__ = None;
                let mut client_trial__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Result => {
                            if result__.is_some() {
                                return Err(serde::de::Error::duplicate_field("result"));
                            }
                            result__ = map_.next_value()?;
                        }
                        GeneratedField::ClientTrial => {
                            if client_trial__.is_some() {
                                return Err(serde::de::Error::duplicate_field("clientTrial"));
                            }
                            client_trial__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(ClientAnswer {
                    result: result__,
                    client_trial: client_trial__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ClientAnswer", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ClientJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.target_host.is_empty() {
            len += 1;
        }
        if self.target_port != 0 {
            len += 1;
        }
        if self.windows.is_some() {
            len += 1;
        }
        if self.connections != 0 {
            len += 1;
        }
        if !self.options.is_empty() {
            len += 1;
        }
        if self.warmup {
            len += 1;
        }
        if self.timeout_s != 0. {
            len += 1;
        }
        if self.idle_s != 0. {
            len += 1;
        }
        if self.message_bytes != 0 {
            len += 1;
        }
        if self.h2.is_some() {
            len += 1;
        }
        if self.work.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ClientJob", len)?;
        if !self.target_host.is_empty() {
            struct_ser.serialize_field("target_host", &self.target_host)?;
        }
        if self.target_port != 0 {
            struct_ser.serialize_field("target_port", &self.target_port)?;
        }
        if let Some(v) = self.windows.as_ref() {
            struct_ser.serialize_field("windows", v)?;
        }
        if self.connections != 0 {
            struct_ser.serialize_field("connections", &self.connections)?;
        }
        if !self.options.is_empty() {
            struct_ser.serialize_field("options", &self.options)?;
        }
        if self.warmup {
            struct_ser.serialize_field("warmup", &self.warmup)?;
        }
        if self.timeout_s != 0. {
            struct_ser.serialize_field("timeout_s", &self.timeout_s)?;
        }
        if self.idle_s != 0. {
            struct_ser.serialize_field("idle_s", &self.idle_s)?;
        }
        if self.message_bytes != 0 {
            struct_ser.serialize_field("message_bytes", &self.message_bytes)?;
        }
        if let Some(v) = self.h2.as_ref() {
            struct_ser.serialize_field("h2", v)?;
        }
        if let Some(v) = self.work.as_ref() {
            match v {
                client_job::Work::Download(v) => {
                    struct_ser.serialize_field("download", v)?;
                }
                client_job::Work::Unary(v) => {
                    struct_ser.serialize_field("unary", v)?;
                }
                client_job::Work::Upload(v) => {
                    struct_ser.serialize_field("upload", v)?;
                }
            }
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ClientJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "target_host",
            "targetHost",
            "target_port",
            "targetPort",
            "windows",
            "connections",
            "options",
            "warmup",
            "timeout_s",
            "timeoutS",
            "idle_s",
            "idleS",
            "message_bytes",
            "messageBytes",
            "h2",
            "download",
            "unary",
            "upload",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            TargetHost,
            TargetPort,
            Windows,
            Connections,
            Options,
            Warmup,
            TimeoutS,
            IdleS,
            MessageBytes,
            H2,
            Download,
            Unary,
            Upload,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "targetHost" | "target_host" => Ok(GeneratedField::TargetHost),
                            "targetPort" | "target_port" => Ok(GeneratedField::TargetPort),
                            "windows" => Ok(GeneratedField::Windows),
                            "connections" => Ok(GeneratedField::Connections),
                            "options" => Ok(GeneratedField::Options),
                            "warmup" => Ok(GeneratedField::Warmup),
                            "timeoutS" | "timeout_s" => Ok(GeneratedField::TimeoutS),
                            "idleS" | "idle_s" => Ok(GeneratedField::IdleS),
                            "messageBytes" | "message_bytes" => Ok(GeneratedField::MessageBytes),
                            "h2" => Ok(GeneratedField::H2),
                            "download" => Ok(GeneratedField::Download),
                            "unary" => Ok(GeneratedField::Unary),
                            "upload" => Ok(GeneratedField::Upload),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ClientJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ClientJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ClientJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut target_host__ = None;
                let mut target_port__ = None;
                let mut windows__ = None;
                let mut connections__ = None;
                let mut options__ = None;
                let mut warmup__ = None;
                let mut timeout_s__ = None;
                let mut idle_s__ = None;
                let mut message_bytes__ = None;
                let mut h2__ = None;
                let mut work__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::TargetHost => {
                            if target_host__.is_some() {
                                return Err(serde::de::Error::duplicate_field("targetHost"));
                            }
                            target_host__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TargetPort => {
                            if target_port__.is_some() {
                                return Err(serde::de::Error::duplicate_field("targetPort"));
                            }
                            target_port__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Windows => {
                            if windows__.is_some() {
                                return Err(serde::de::Error::duplicate_field("windows"));
                            }
                            windows__ = map_.next_value()?;
                        }
                        GeneratedField::Connections => {
                            if connections__.is_some() {
                                return Err(serde::de::Error::duplicate_field("connections"));
                            }
                            connections__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Options => {
                            if options__.is_some() {
                                return Err(serde::de::Error::duplicate_field("options"));
                            }
                            options__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Warmup => {
                            if warmup__.is_some() {
                                return Err(serde::de::Error::duplicate_field("warmup"));
                            }
                            warmup__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TimeoutS => {
                            if timeout_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("timeoutS"));
                            }
                            timeout_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::IdleS => {
                            if idle_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("idleS"));
                            }
                            idle_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MessageBytes => {
                            if message_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("messageBytes"));
                            }
                            message_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::H2 => {
                            if h2__.is_some() {
                                return Err(serde::de::Error::duplicate_field("h2"));
                            }
                            h2__ = map_.next_value()?;
                        }
                        GeneratedField::Download => {
                            if work__.is_some() {
                                return Err(serde::de::Error::duplicate_field("download"));
                            }
                            work__ = map_.next_value::<::std::option::Option<_>>()?.map(client_job::Work::Download)
;
                        }
                        GeneratedField::Unary => {
                            if work__.is_some() {
                                return Err(serde::de::Error::duplicate_field("unary"));
                            }
                            work__ = map_.next_value::<::std::option::Option<_>>()?.map(client_job::Work::Unary)
;
                        }
                        GeneratedField::Upload => {
                            if work__.is_some() {
                                return Err(serde::de::Error::duplicate_field("upload"));
                            }
                            work__ = map_.next_value::<::std::option::Option<_>>()?.map(client_job::Work::Upload)
;
                        }
                    }
                }
                Ok(ClientJob {
                    target_host: target_host__.unwrap_or_default(),
                    target_port: target_port__.unwrap_or_default(),
                    windows: windows__,
                    connections: connections__.unwrap_or_default(),
                    options: options__.unwrap_or_default(),
                    warmup: warmup__.unwrap_or_default(),
                    timeout_s: timeout_s__.unwrap_or_default(),
                    idle_s: idle_s__.unwrap_or_default(),
                    message_bytes: message_bytes__.unwrap_or_default(),
                    h2: h2__,
                    work: work__,
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ClientJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ClientResult {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.client.is_empty() {
            len += 1;
        }
        if self.bytes != 0 {
            len += 1;
        }
        if self.messages != 0 {
            len += 1;
        }
        if self.elapsed_s != 0. {
            len += 1;
        }
        if self.t_start_ns != 0 {
            len += 1;
        }
        if self.t_end_ns != 0 {
            len += 1;
        }
        if !self.stream_bytes.is_empty() {
            len += 1;
        }
        if !self.stream_finish_s.is_empty() {
            len += 1;
        }
        if self.cpu_s != 0. {
            len += 1;
        }
        if !self.ping_rtt_ms.is_empty() {
            len += 1;
        }
        if !self.latencies_ms.is_empty() {
            len += 1;
        }
        if !self.window_trace.is_empty() {
            len += 1;
        }
        if !self.notes.is_empty() {
            len += 1;
        }
        if self.sent_bytes != 0 {
            len += 1;
        }
        if self.credit_wait_s.is_some() {
            len += 1;
        }
        if self.slow_streams != 0 {
            len += 1;
        }
        if !self.stream_peak_unread_bytes.is_empty() {
            len += 1;
        }
        if !self.stream_window_bytes.is_empty() {
            len += 1;
        }
        if self.peak_unread_bytes.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ClientResult", len)?;
        if !self.client.is_empty() {
            struct_ser.serialize_field("client", &self.client)?;
        }
        if self.bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("bytes", ToString::to_string(&self.bytes).as_str())?;
        }
        if self.messages != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("messages", ToString::to_string(&self.messages).as_str())?;
        }
        if self.elapsed_s != 0. {
            struct_ser.serialize_field("elapsed_s", &self.elapsed_s)?;
        }
        if self.t_start_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("t_start_ns", ToString::to_string(&self.t_start_ns).as_str())?;
        }
        if self.t_end_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("t_end_ns", ToString::to_string(&self.t_end_ns).as_str())?;
        }
        if !self.stream_bytes.is_empty() {
            struct_ser.serialize_field("stream_bytes", &self.stream_bytes.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        }
        if !self.stream_finish_s.is_empty() {
            struct_ser.serialize_field("stream_finish_s", &self.stream_finish_s)?;
        }
        if self.cpu_s != 0. {
            struct_ser.serialize_field("cpu_s", &self.cpu_s)?;
        }
        if !self.ping_rtt_ms.is_empty() {
            struct_ser.serialize_field("ping_rtt_ms", &self.ping_rtt_ms)?;
        }
        if !self.latencies_ms.is_empty() {
            struct_ser.serialize_field("latencies_ms", &self.latencies_ms)?;
        }
        if !self.window_trace.is_empty() {
            struct_ser.serialize_field("window_trace", &self.window_trace)?;
        }
        if !self.notes.is_empty() {
            struct_ser.serialize_field("notes", &self.notes)?;
        }
        if self.sent_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("sent_bytes", ToString::to_string(&self.sent_bytes).as_str())?;
        }
        if let Some(v) = self.credit_wait_s.as_ref() {
            struct_ser.serialize_field("credit_wait_s", v)?;
        }
        if self.slow_streams != 0 {
            struct_ser.serialize_field("slow_streams", &self.slow_streams)?;
        }
        if !self.stream_peak_unread_bytes.is_empty() {
            struct_ser.serialize_field("stream_peak_unread_bytes", &self.stream_peak_unread_bytes.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        }
        if !self.stream_window_bytes.is_empty() {
            struct_ser.serialize_field("stream_window_bytes", &self.stream_window_bytes.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        }
        if let Some(v) = self.peak_unread_bytes.as_ref() {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("peak_unread_bytes", ToString::to_string(&v).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ClientResult {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "client",
            "bytes",
            "messages",
            "elapsed_s",
            "elapsedS",
            "t_start_ns",
            "tStartNs",
            "t_end_ns",
            "tEndNs",
            "stream_bytes",
            "streamBytes",
            "stream_finish_s",
            "streamFinishS",
            "cpu_s",
            "cpuS",
            "ping_rtt_ms",
            "pingRttMs",
            "latencies_ms",
            "latenciesMs",
            "window_trace",
            "windowTrace",
            "notes",
            "sent_bytes",
            "sentBytes",
            "credit_wait_s",
            "creditWaitS",
            "slow_streams",
            "slowStreams",
            "stream_peak_unread_bytes",
            "streamPeakUnreadBytes",
            "stream_window_bytes",
            "streamWindowBytes",
            "peak_unread_bytes",
            "peakUnreadBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Client,
            Bytes,
            Messages,
            ElapsedS,
            TStartNs,
            TEndNs,
            StreamBytes,
            StreamFinishS,
            CpuS,
            PingRttMs,
            LatenciesMs,
            WindowTrace,
            Notes,
            SentBytes,
            CreditWaitS,
            SlowStreams,
            StreamPeakUnreadBytes,
            StreamWindowBytes,
            PeakUnreadBytes,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "client" => Ok(GeneratedField::Client),
                            "bytes" => Ok(GeneratedField::Bytes),
                            "messages" => Ok(GeneratedField::Messages),
                            "elapsedS" | "elapsed_s" => Ok(GeneratedField::ElapsedS),
                            "tStartNs" | "t_start_ns" => Ok(GeneratedField::TStartNs),
                            "tEndNs" | "t_end_ns" => Ok(GeneratedField::TEndNs),
                            "streamBytes" | "stream_bytes" => Ok(GeneratedField::StreamBytes),
                            "streamFinishS" | "stream_finish_s" => Ok(GeneratedField::StreamFinishS),
                            "cpuS" | "cpu_s" => Ok(GeneratedField::CpuS),
                            "pingRttMs" | "ping_rtt_ms" => Ok(GeneratedField::PingRttMs),
                            "latenciesMs" | "latencies_ms" => Ok(GeneratedField::LatenciesMs),
                            "windowTrace" | "window_trace" => Ok(GeneratedField::WindowTrace),
                            "notes" => Ok(GeneratedField::Notes),
                            "sentBytes" | "sent_bytes" => Ok(GeneratedField::SentBytes),
                            "creditWaitS" | "credit_wait_s" => Ok(GeneratedField::CreditWaitS),
                            "slowStreams" | "slow_streams" => Ok(GeneratedField::SlowStreams),
                            "streamPeakUnreadBytes" | "stream_peak_unread_bytes" => Ok(GeneratedField::StreamPeakUnreadBytes),
                            "streamWindowBytes" | "stream_window_bytes" => Ok(GeneratedField::StreamWindowBytes),
                            "peakUnreadBytes" | "peak_unread_bytes" => Ok(GeneratedField::PeakUnreadBytes),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ClientResult;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ClientResult")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ClientResult, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut client__ = None;
                let mut bytes__ = None;
                let mut messages__ = None;
                let mut elapsed_s__ = None;
                let mut t_start_ns__ = None;
                let mut t_end_ns__ = None;
                let mut stream_bytes__ = None;
                let mut stream_finish_s__ = None;
                let mut cpu_s__ = None;
                let mut ping_rtt_ms__ = None;
                let mut latencies_ms__ = None;
                let mut window_trace__ = None;
                let mut notes__ = None;
                let mut sent_bytes__ = None;
                let mut credit_wait_s__ = None;
                let mut slow_streams__ = None;
                let mut stream_peak_unread_bytes__ = None;
                let mut stream_window_bytes__ = None;
                let mut peak_unread_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Client => {
                            if client__.is_some() {
                                return Err(serde::de::Error::duplicate_field("client"));
                            }
                            client__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Bytes => {
                            if bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("bytes"));
                            }
                            bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Messages => {
                            if messages__.is_some() {
                                return Err(serde::de::Error::duplicate_field("messages"));
                            }
                            messages__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::ElapsedS => {
                            if elapsed_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("elapsedS"));
                            }
                            elapsed_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::TStartNs => {
                            if t_start_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tStartNs"));
                            }
                            t_start_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::TEndNs => {
                            if t_end_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tEndNs"));
                            }
                            t_end_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::StreamBytes => {
                            if stream_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streamBytes"));
                            }
                            stream_bytes__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::StreamFinishS => {
                            if stream_finish_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streamFinishS"));
                            }
                            stream_finish_s__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::CpuS => {
                            if cpu_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("cpuS"));
                            }
                            cpu_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::PingRttMs => {
                            if ping_rtt_ms__.is_some() {
                                return Err(serde::de::Error::duplicate_field("pingRttMs"));
                            }
                            ping_rtt_ms__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::LatenciesMs => {
                            if latencies_ms__.is_some() {
                                return Err(serde::de::Error::duplicate_field("latenciesMs"));
                            }
                            latencies_ms__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::WindowTrace => {
                            if window_trace__.is_some() {
                                return Err(serde::de::Error::duplicate_field("windowTrace"));
                            }
                            window_trace__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Notes => {
                            if notes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("notes"));
                            }
                            notes__ = Some(map_.next_value()?);
                        }
                        GeneratedField::SentBytes => {
                            if sent_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("sentBytes"));
                            }
                            sent_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::CreditWaitS => {
                            if credit_wait_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("creditWaitS"));
                            }
                            credit_wait_s__ = 
                                map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| x.0)
                            ;
                        }
                        GeneratedField::SlowStreams => {
                            if slow_streams__.is_some() {
                                return Err(serde::de::Error::duplicate_field("slowStreams"));
                            }
                            slow_streams__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::StreamPeakUnreadBytes => {
                            if stream_peak_unread_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streamPeakUnreadBytes"));
                            }
                            stream_peak_unread_bytes__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::StreamWindowBytes => {
                            if stream_window_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streamWindowBytes"));
                            }
                            stream_window_bytes__ = 
                                Some(map_.next_value::<Vec<::pbjson::private::NumberDeserialize<_>>>()?
                                    .into_iter().map(|x| x.0).collect())
                            ;
                        }
                        GeneratedField::PeakUnreadBytes => {
                            if peak_unread_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("peakUnreadBytes"));
                            }
                            peak_unread_bytes__ = 
                                map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| x.0)
                            ;
                        }
                    }
                }
                Ok(ClientResult {
                    client: client__.unwrap_or_default(),
                    bytes: bytes__.unwrap_or_default(),
                    messages: messages__.unwrap_or_default(),
                    elapsed_s: elapsed_s__.unwrap_or_default(),
                    t_start_ns: t_start_ns__.unwrap_or_default(),
                    t_end_ns: t_end_ns__.unwrap_or_default(),
                    stream_bytes: stream_bytes__.unwrap_or_default(),
                    stream_finish_s: stream_finish_s__.unwrap_or_default(),
                    cpu_s: cpu_s__.unwrap_or_default(),
                    ping_rtt_ms: ping_rtt_ms__.unwrap_or_default(),
                    latencies_ms: latencies_ms__.unwrap_or_default(),
                    window_trace: window_trace__.unwrap_or_default(),
                    notes: notes__.unwrap_or_default(),
                    sent_bytes: sent_bytes__.unwrap_or_default(),
                    credit_wait_s: credit_wait_s__,
                    slow_streams: slow_streams__.unwrap_or_default(),
                    stream_peak_unread_bytes: stream_peak_unread_bytes__.unwrap_or_default(),
                    stream_window_bytes: stream_window_bytes__.unwrap_or_default(),
                    peak_unread_bytes: peak_unread_bytes__,
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ClientResult", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Download {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.streams != 0 {
            len += 1;
        }
        if self.timed_s != 0. {
            len += 1;
        }
        if self.messages_per_stream != 0 {
            len += 1;
        }
        if self.slow_streams != 0 {
            len += 1;
        }
        if self.pacing.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Download", len)?;
        if self.streams != 0 {
            struct_ser.serialize_field("streams", &self.streams)?;
        }
        if self.timed_s != 0. {
            struct_ser.serialize_field("timed_s", &self.timed_s)?;
        }
        if self.messages_per_stream != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("messages_per_stream", ToString::to_string(&self.messages_per_stream).as_str())?;
        }
        if self.slow_streams != 0 {
            struct_ser.serialize_field("slow_streams", &self.slow_streams)?;
        }
        if let Some(v) = self.pacing.as_ref() {
            struct_ser.serialize_field("pacing", v)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Download {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "streams",
            "timed_s",
            "timedS",
            "messages_per_stream",
            "messagesPerStream",
            "slow_streams",
            "slowStreams",
            "pacing",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Streams,
            TimedS,
            MessagesPerStream,
            SlowStreams,
            Pacing,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "streams" => Ok(GeneratedField::Streams),
                            "timedS" | "timed_s" => Ok(GeneratedField::TimedS),
                            "messagesPerStream" | "messages_per_stream" => Ok(GeneratedField::MessagesPerStream),
                            "slowStreams" | "slow_streams" => Ok(GeneratedField::SlowStreams),
                            "pacing" => Ok(GeneratedField::Pacing),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Download;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Download")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Download, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut streams__ = None;
                let mut timed_s__ = None;
                let mut messages_per_stream__ = None;
                let mut slow_streams__ = None;
                let mut pacing__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Streams => {
                            if streams__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streams"));
                            }
                            streams__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::TimedS => {
                            if timed_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("timedS"));
                            }
                            timed_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MessagesPerStream => {
                            if messages_per_stream__.is_some() {
                                return Err(serde::de::Error::duplicate_field("messagesPerStream"));
                            }
                            messages_per_stream__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::SlowStreams => {
                            if slow_streams__.is_some() {
                                return Err(serde::de::Error::duplicate_field("slowStreams"));
                            }
                            slow_streams__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Pacing => {
                            if pacing__.is_some() {
                                return Err(serde::de::Error::duplicate_field("pacing"));
                            }
                            pacing__ = map_.next_value()?;
                        }
                    }
                }
                Ok(Download {
                    streams: streams__.unwrap_or_default(),
                    timed_s: timed_s__.unwrap_or_default(),
                    messages_per_stream: messages_per_stream__.unwrap_or_default(),
                    slow_streams: slow_streams__.unwrap_or_default(),
                    pacing: pacing__,
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Download", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Failure {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.error.is_empty() {
            len += 1;
        }
        if self.exit_code != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Failure", len)?;
        if !self.error.is_empty() {
            struct_ser.serialize_field("error", &self.error)?;
        }
        if self.exit_code != 0 {
            struct_ser.serialize_field("exit_code", &self.exit_code)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Failure {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "error",
            "exit_code",
            "exitCode",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Error,
            ExitCode,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "error" => Ok(GeneratedField::Error),
                            "exitCode" | "exit_code" => Ok(GeneratedField::ExitCode),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Failure;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Failure")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Failure, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut error__ = None;
                let mut exit_code__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Error => {
                            if error__.is_some() {
                                return Err(serde::de::Error::duplicate_field("error"));
                            }
                            error__ = Some(map_.next_value()?);
                        }
                        GeneratedField::ExitCode => {
                            if exit_code__.is_some() {
                                return Err(serde::de::Error::duplicate_field("exitCode"));
                            }
                            exit_code__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(Failure {
                    error: error__.unwrap_or_default(),
                    exit_code: exit_code__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Failure", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ForwarderJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.link.is_some() {
            len += 1;
        }
        if self.loss != 0. {
            len += 1;
        }
        if self.loss_burst_len != 0. {
            len += 1;
        }
        if self.queue_up_bytes != 0 {
            len += 1;
        }
        if self.queue_down_bytes != 0 {
            len += 1;
        }
        if self.mtu != 0 {
            len += 1;
        }
        if !self.congestion.is_empty() {
            len += 1;
        }
        if !self.tap_path.is_empty() {
            len += 1;
        }
        if !self.tap_decoder.is_empty() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ForwarderJob", len)?;
        if let Some(v) = self.link.as_ref() {
            struct_ser.serialize_field("link", v)?;
        }
        if self.loss != 0. {
            struct_ser.serialize_field("loss", &self.loss)?;
        }
        if self.loss_burst_len != 0. {
            struct_ser.serialize_field("loss_burst_len", &self.loss_burst_len)?;
        }
        if self.queue_up_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("queue_up_bytes", ToString::to_string(&self.queue_up_bytes).as_str())?;
        }
        if self.queue_down_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("queue_down_bytes", ToString::to_string(&self.queue_down_bytes).as_str())?;
        }
        if self.mtu != 0 {
            struct_ser.serialize_field("mtu", &self.mtu)?;
        }
        if !self.congestion.is_empty() {
            struct_ser.serialize_field("congestion", &self.congestion)?;
        }
        if !self.tap_path.is_empty() {
            struct_ser.serialize_field("tap_path", &self.tap_path)?;
        }
        if !self.tap_decoder.is_empty() {
            struct_ser.serialize_field("tap_decoder", &self.tap_decoder)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ForwarderJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "link",
            "loss",
            "loss_burst_len",
            "lossBurstLen",
            "queue_up_bytes",
            "queueUpBytes",
            "queue_down_bytes",
            "queueDownBytes",
            "mtu",
            "congestion",
            "tap_path",
            "tapPath",
            "tap_decoder",
            "tapDecoder",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Link,
            Loss,
            LossBurstLen,
            QueueUpBytes,
            QueueDownBytes,
            Mtu,
            Congestion,
            TapPath,
            TapDecoder,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "link" => Ok(GeneratedField::Link),
                            "loss" => Ok(GeneratedField::Loss),
                            "lossBurstLen" | "loss_burst_len" => Ok(GeneratedField::LossBurstLen),
                            "queueUpBytes" | "queue_up_bytes" => Ok(GeneratedField::QueueUpBytes),
                            "queueDownBytes" | "queue_down_bytes" => Ok(GeneratedField::QueueDownBytes),
                            "mtu" => Ok(GeneratedField::Mtu),
                            "congestion" => Ok(GeneratedField::Congestion),
                            "tapPath" | "tap_path" => Ok(GeneratedField::TapPath),
                            "tapDecoder" | "tap_decoder" => Ok(GeneratedField::TapDecoder),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ForwarderJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ForwarderJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ForwarderJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut link__ = None;
                let mut loss__ = None;
                let mut loss_burst_len__ = None;
                let mut queue_up_bytes__ = None;
                let mut queue_down_bytes__ = None;
                let mut mtu__ = None;
                let mut congestion__ = None;
                let mut tap_path__ = None;
                let mut tap_decoder__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Link => {
                            if link__.is_some() {
                                return Err(serde::de::Error::duplicate_field("link"));
                            }
                            link__ = map_.next_value()?;
                        }
                        GeneratedField::Loss => {
                            if loss__.is_some() {
                                return Err(serde::de::Error::duplicate_field("loss"));
                            }
                            loss__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::LossBurstLen => {
                            if loss_burst_len__.is_some() {
                                return Err(serde::de::Error::duplicate_field("lossBurstLen"));
                            }
                            loss_burst_len__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::QueueUpBytes => {
                            if queue_up_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("queueUpBytes"));
                            }
                            queue_up_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::QueueDownBytes => {
                            if queue_down_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("queueDownBytes"));
                            }
                            queue_down_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Mtu => {
                            if mtu__.is_some() {
                                return Err(serde::de::Error::duplicate_field("mtu"));
                            }
                            mtu__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Congestion => {
                            if congestion__.is_some() {
                                return Err(serde::de::Error::duplicate_field("congestion"));
                            }
                            congestion__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TapPath => {
                            if tap_path__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tapPath"));
                            }
                            tap_path__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TapDecoder => {
                            if tap_decoder__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tapDecoder"));
                            }
                            tap_decoder__ = Some(map_.next_value()?);
                        }
                    }
                }
                Ok(ForwarderJob {
                    link: link__,
                    loss: loss__.unwrap_or_default(),
                    loss_burst_len: loss_burst_len__.unwrap_or_default(),
                    queue_up_bytes: queue_up_bytes__.unwrap_or_default(),
                    queue_down_bytes: queue_down_bytes__.unwrap_or_default(),
                    mtu: mtu__.unwrap_or_default(),
                    congestion: congestion__.unwrap_or_default(),
                    tap_path: tap_path__.unwrap_or_default(),
                    tap_decoder: tap_decoder__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ForwarderJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for H2Receiver {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.policy.is_empty() {
            len += 1;
        }
        if !self.credit.is_empty() {
            len += 1;
        }
        if !self.conn_credit.is_empty() {
            len += 1;
        }
        if self.max_frame_bytes != 0 {
            len += 1;
        }
        if self.pool_bytes != 0 {
            len += 1;
        }
        if self.prime_bytes != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.H2Receiver", len)?;
        if !self.policy.is_empty() {
            struct_ser.serialize_field("policy", &self.policy)?;
        }
        if !self.credit.is_empty() {
            struct_ser.serialize_field("credit", &self.credit)?;
        }
        if !self.conn_credit.is_empty() {
            struct_ser.serialize_field("conn_credit", &self.conn_credit)?;
        }
        if self.max_frame_bytes != 0 {
            struct_ser.serialize_field("max_frame_bytes", &self.max_frame_bytes)?;
        }
        if self.pool_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("pool_bytes", ToString::to_string(&self.pool_bytes).as_str())?;
        }
        if self.prime_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("prime_bytes", ToString::to_string(&self.prime_bytes).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for H2Receiver {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "policy",
            "credit",
            "conn_credit",
            "connCredit",
            "max_frame_bytes",
            "maxFrameBytes",
            "pool_bytes",
            "poolBytes",
            "prime_bytes",
            "primeBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Policy,
            Credit,
            ConnCredit,
            MaxFrameBytes,
            PoolBytes,
            PrimeBytes,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "policy" => Ok(GeneratedField::Policy),
                            "credit" => Ok(GeneratedField::Credit),
                            "connCredit" | "conn_credit" => Ok(GeneratedField::ConnCredit),
                            "maxFrameBytes" | "max_frame_bytes" => Ok(GeneratedField::MaxFrameBytes),
                            "poolBytes" | "pool_bytes" => Ok(GeneratedField::PoolBytes),
                            "primeBytes" | "prime_bytes" => Ok(GeneratedField::PrimeBytes),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = H2Receiver;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.H2Receiver")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<H2Receiver, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut policy__ = None;
                let mut credit__ = None;
                let mut conn_credit__ = None;
                let mut max_frame_bytes__ = None;
                let mut pool_bytes__ = None;
                let mut prime_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Policy => {
                            if policy__.is_some() {
                                return Err(serde::de::Error::duplicate_field("policy"));
                            }
                            policy__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Credit => {
                            if credit__.is_some() {
                                return Err(serde::de::Error::duplicate_field("credit"));
                            }
                            credit__ = Some(map_.next_value()?);
                        }
                        GeneratedField::ConnCredit => {
                            if conn_credit__.is_some() {
                                return Err(serde::de::Error::duplicate_field("connCredit"));
                            }
                            conn_credit__ = Some(map_.next_value()?);
                        }
                        GeneratedField::MaxFrameBytes => {
                            if max_frame_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxFrameBytes"));
                            }
                            max_frame_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::PoolBytes => {
                            if pool_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("poolBytes"));
                            }
                            pool_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::PrimeBytes => {
                            if prime_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("primeBytes"));
                            }
                            prime_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(H2Receiver {
                    policy: policy__.unwrap_or_default(),
                    credit: credit__.unwrap_or_default(),
                    conn_credit: conn_credit__.unwrap_or_default(),
                    max_frame_bytes: max_frame_bytes__.unwrap_or_default(),
                    pool_bytes: pool_bytes__.unwrap_or_default(),
                    prime_bytes: prime_bytes__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.H2Receiver", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for LinkJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.delay_up_ns != 0 {
            len += 1;
        }
        if self.delay_down_ns != 0 {
            len += 1;
        }
        if self.rate_up_bits_s.is_some() {
            len += 1;
        }
        if self.rate_down_bits_s.is_some() {
            len += 1;
        }
        if self.jitter_ns != 0 {
            len += 1;
        }
        if self.seed != 0 {
            len += 1;
        }
        if !self.rate_steps.is_empty() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.LinkJob", len)?;
        if self.delay_up_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("delay_up_ns", ToString::to_string(&self.delay_up_ns).as_str())?;
        }
        if self.delay_down_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("delay_down_ns", ToString::to_string(&self.delay_down_ns).as_str())?;
        }
        if let Some(v) = self.rate_up_bits_s.as_ref() {
            struct_ser.serialize_field("rate_up_bits_s", v)?;
        }
        if let Some(v) = self.rate_down_bits_s.as_ref() {
            struct_ser.serialize_field("rate_down_bits_s", v)?;
        }
        if self.jitter_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("jitter_ns", ToString::to_string(&self.jitter_ns).as_str())?;
        }
        if self.seed != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("seed", ToString::to_string(&self.seed).as_str())?;
        }
        if !self.rate_steps.is_empty() {
            struct_ser.serialize_field("rate_steps", &self.rate_steps)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for LinkJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "delay_up_ns",
            "delayUpNs",
            "delay_down_ns",
            "delayDownNs",
            "rate_up_bits_s",
            "rateUpBitsS",
            "rate_down_bits_s",
            "rateDownBitsS",
            "jitter_ns",
            "jitterNs",
            "seed",
            "rate_steps",
            "rateSteps",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            DelayUpNs,
            DelayDownNs,
            RateUpBitsS,
            RateDownBitsS,
            JitterNs,
            Seed,
            RateSteps,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "delayUpNs" | "delay_up_ns" => Ok(GeneratedField::DelayUpNs),
                            "delayDownNs" | "delay_down_ns" => Ok(GeneratedField::DelayDownNs),
                            "rateUpBitsS" | "rate_up_bits_s" => Ok(GeneratedField::RateUpBitsS),
                            "rateDownBitsS" | "rate_down_bits_s" => Ok(GeneratedField::RateDownBitsS),
                            "jitterNs" | "jitter_ns" => Ok(GeneratedField::JitterNs),
                            "seed" => Ok(GeneratedField::Seed),
                            "rateSteps" | "rate_steps" => Ok(GeneratedField::RateSteps),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = LinkJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.LinkJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<LinkJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut delay_up_ns__ = None;
                let mut delay_down_ns__ = None;
                let mut rate_up_bits_s__ = None;
                let mut rate_down_bits_s__ = None;
                let mut jitter_ns__ = None;
                let mut seed__ = None;
                let mut rate_steps__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::DelayUpNs => {
                            if delay_up_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("delayUpNs"));
                            }
                            delay_up_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::DelayDownNs => {
                            if delay_down_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("delayDownNs"));
                            }
                            delay_down_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::RateUpBitsS => {
                            if rate_up_bits_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rateUpBitsS"));
                            }
                            rate_up_bits_s__ = 
                                map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| x.0)
                            ;
                        }
                        GeneratedField::RateDownBitsS => {
                            if rate_down_bits_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rateDownBitsS"));
                            }
                            rate_down_bits_s__ = 
                                map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| x.0)
                            ;
                        }
                        GeneratedField::JitterNs => {
                            if jitter_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("jitterNs"));
                            }
                            jitter_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Seed => {
                            if seed__.is_some() {
                                return Err(serde::de::Error::duplicate_field("seed"));
                            }
                            seed__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::RateSteps => {
                            if rate_steps__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rateSteps"));
                            }
                            rate_steps__ = Some(map_.next_value()?);
                        }
                    }
                }
                Ok(LinkJob {
                    delay_up_ns: delay_up_ns__.unwrap_or_default(),
                    delay_down_ns: delay_down_ns__.unwrap_or_default(),
                    rate_up_bits_s: rate_up_bits_s__,
                    rate_down_bits_s: rate_down_bits_s__,
                    jitter_ns: jitter_ns__.unwrap_or_default(),
                    seed: seed__.unwrap_or_default(),
                    rate_steps: rate_steps__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.LinkJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Option {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.name.is_empty() {
            len += 1;
        }
        if self.value.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Option", len)?;
        if !self.name.is_empty() {
            struct_ser.serialize_field("name", &self.name)?;
        }
        if let Some(v) = self.value.as_ref() {
            match v {
                option::Value::Int(v) => {
                    #[allow(clippy::needless_borrow)]
                    #[allow(clippy::needless_borrows_for_generic_args)]
                    struct_ser.serialize_field("int", ToString::to_string(&v).as_str())?;
                }
                option::Value::Flag(v) => {
                    struct_ser.serialize_field("flag", v)?;
                }
                option::Value::Ratio(v) => {
                    struct_ser.serialize_field("ratio", v)?;
                }
                option::Value::Text(v) => {
                    struct_ser.serialize_field("text", v)?;
                }
            }
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Option {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "name",
            "int",
            "flag",
            "ratio",
            "text",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Name,
            Int,
            Flag,
            Ratio,
            Text,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "name" => Ok(GeneratedField::Name),
                            "int" => Ok(GeneratedField::Int),
                            "flag" => Ok(GeneratedField::Flag),
                            "ratio" => Ok(GeneratedField::Ratio),
                            "text" => Ok(GeneratedField::Text),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Option;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Option")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Option, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut name__ = None;
                let mut value__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Name => {
                            if name__.is_some() {
                                return Err(serde::de::Error::duplicate_field("name"));
                            }
                            name__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Int => {
                            if value__.is_some() {
                                return Err(serde::de::Error::duplicate_field("int"));
                            }
                            value__ = map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| option::Value::Int(x.0));
                        }
                        GeneratedField::Flag => {
                            if value__.is_some() {
                                return Err(serde::de::Error::duplicate_field("flag"));
                            }
                            value__ = map_.next_value::<::std::option::Option<_>>()?.map(option::Value::Flag);
                        }
                        GeneratedField::Ratio => {
                            if value__.is_some() {
                                return Err(serde::de::Error::duplicate_field("ratio"));
                            }
                            value__ = map_.next_value::<::std::option::Option<::pbjson::private::NumberDeserialize<_>>>()?.map(|x| option::Value::Ratio(x.0));
                        }
                        GeneratedField::Text => {
                            if value__.is_some() {
                                return Err(serde::de::Error::duplicate_field("text"));
                            }
                            value__ = map_.next_value::<::std::option::Option<_>>()?.map(option::Value::Text);
                        }
                    }
                }
                Ok(Option {
                    name: name__.unwrap_or_default(),
                    value: value__,
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Option", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ProxyJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.listen_host.is_empty() {
            len += 1;
        }
        if self.listen_port != 0 {
            len += 1;
        }
        if !self.upstream_host.is_empty() {
            len += 1;
        }
        if self.upstream_port != 0 {
            len += 1;
        }
        if self.link.is_some() {
            len += 1;
        }
        if self.read_bytes != 0 {
            len += 1;
        }
        if self.buffer_cap_bytes != 0 {
            len += 1;
        }
        if !self.tap_path.is_empty() {
            len += 1;
        }
        if !self.tap_decoder.is_empty() {
            len += 1;
        }
        if !self.counter_path.is_empty() {
            len += 1;
        }
        if self.max_connections != 0 {
            len += 1;
        }
        if self.max_buffered_bytes != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ProxyJob", len)?;
        if !self.listen_host.is_empty() {
            struct_ser.serialize_field("listen_host", &self.listen_host)?;
        }
        if self.listen_port != 0 {
            struct_ser.serialize_field("listen_port", &self.listen_port)?;
        }
        if !self.upstream_host.is_empty() {
            struct_ser.serialize_field("upstream_host", &self.upstream_host)?;
        }
        if self.upstream_port != 0 {
            struct_ser.serialize_field("upstream_port", &self.upstream_port)?;
        }
        if let Some(v) = self.link.as_ref() {
            struct_ser.serialize_field("link", v)?;
        }
        if self.read_bytes != 0 {
            struct_ser.serialize_field("read_bytes", &self.read_bytes)?;
        }
        if self.buffer_cap_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("buffer_cap_bytes", ToString::to_string(&self.buffer_cap_bytes).as_str())?;
        }
        if !self.tap_path.is_empty() {
            struct_ser.serialize_field("tap_path", &self.tap_path)?;
        }
        if !self.tap_decoder.is_empty() {
            struct_ser.serialize_field("tap_decoder", &self.tap_decoder)?;
        }
        if !self.counter_path.is_empty() {
            struct_ser.serialize_field("counter_path", &self.counter_path)?;
        }
        if self.max_connections != 0 {
            struct_ser.serialize_field("max_connections", &self.max_connections)?;
        }
        if self.max_buffered_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("max_buffered_bytes", ToString::to_string(&self.max_buffered_bytes).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ProxyJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "listen_host",
            "listenHost",
            "listen_port",
            "listenPort",
            "upstream_host",
            "upstreamHost",
            "upstream_port",
            "upstreamPort",
            "link",
            "read_bytes",
            "readBytes",
            "buffer_cap_bytes",
            "bufferCapBytes",
            "tap_path",
            "tapPath",
            "tap_decoder",
            "tapDecoder",
            "counter_path",
            "counterPath",
            "max_connections",
            "maxConnections",
            "max_buffered_bytes",
            "maxBufferedBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            ListenHost,
            ListenPort,
            UpstreamHost,
            UpstreamPort,
            Link,
            ReadBytes,
            BufferCapBytes,
            TapPath,
            TapDecoder,
            CounterPath,
            MaxConnections,
            MaxBufferedBytes,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "listenHost" | "listen_host" => Ok(GeneratedField::ListenHost),
                            "listenPort" | "listen_port" => Ok(GeneratedField::ListenPort),
                            "upstreamHost" | "upstream_host" => Ok(GeneratedField::UpstreamHost),
                            "upstreamPort" | "upstream_port" => Ok(GeneratedField::UpstreamPort),
                            "link" => Ok(GeneratedField::Link),
                            "readBytes" | "read_bytes" => Ok(GeneratedField::ReadBytes),
                            "bufferCapBytes" | "buffer_cap_bytes" => Ok(GeneratedField::BufferCapBytes),
                            "tapPath" | "tap_path" => Ok(GeneratedField::TapPath),
                            "tapDecoder" | "tap_decoder" => Ok(GeneratedField::TapDecoder),
                            "counterPath" | "counter_path" => Ok(GeneratedField::CounterPath),
                            "maxConnections" | "max_connections" => Ok(GeneratedField::MaxConnections),
                            "maxBufferedBytes" | "max_buffered_bytes" => Ok(GeneratedField::MaxBufferedBytes),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ProxyJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ProxyJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ProxyJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut listen_host__ = None;
                let mut listen_port__ = None;
                let mut upstream_host__ = None;
                let mut upstream_port__ = None;
                let mut link__ = None;
                let mut read_bytes__ = None;
                let mut buffer_cap_bytes__ = None;
                let mut tap_path__ = None;
                let mut tap_decoder__ = None;
                let mut counter_path__ = None;
                let mut max_connections__ = None;
                let mut max_buffered_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::ListenHost => {
                            if listen_host__.is_some() {
                                return Err(serde::de::Error::duplicate_field("listenHost"));
                            }
                            listen_host__ = Some(map_.next_value()?);
                        }
                        GeneratedField::ListenPort => {
                            if listen_port__.is_some() {
                                return Err(serde::de::Error::duplicate_field("listenPort"));
                            }
                            listen_port__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::UpstreamHost => {
                            if upstream_host__.is_some() {
                                return Err(serde::de::Error::duplicate_field("upstreamHost"));
                            }
                            upstream_host__ = Some(map_.next_value()?);
                        }
                        GeneratedField::UpstreamPort => {
                            if upstream_port__.is_some() {
                                return Err(serde::de::Error::duplicate_field("upstreamPort"));
                            }
                            upstream_port__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Link => {
                            if link__.is_some() {
                                return Err(serde::de::Error::duplicate_field("link"));
                            }
                            link__ = map_.next_value()?;
                        }
                        GeneratedField::ReadBytes => {
                            if read_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("readBytes"));
                            }
                            read_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::BufferCapBytes => {
                            if buffer_cap_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("bufferCapBytes"));
                            }
                            buffer_cap_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::TapPath => {
                            if tap_path__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tapPath"));
                            }
                            tap_path__ = Some(map_.next_value()?);
                        }
                        GeneratedField::TapDecoder => {
                            if tap_decoder__.is_some() {
                                return Err(serde::de::Error::duplicate_field("tapDecoder"));
                            }
                            tap_decoder__ = Some(map_.next_value()?);
                        }
                        GeneratedField::CounterPath => {
                            if counter_path__.is_some() {
                                return Err(serde::de::Error::duplicate_field("counterPath"));
                            }
                            counter_path__ = Some(map_.next_value()?);
                        }
                        GeneratedField::MaxConnections => {
                            if max_connections__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxConnections"));
                            }
                            max_connections__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MaxBufferedBytes => {
                            if max_buffered_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxBufferedBytes"));
                            }
                            max_buffered_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(ProxyJob {
                    listen_host: listen_host__.unwrap_or_default(),
                    listen_port: listen_port__.unwrap_or_default(),
                    upstream_host: upstream_host__.unwrap_or_default(),
                    upstream_port: upstream_port__.unwrap_or_default(),
                    link: link__,
                    read_bytes: read_bytes__.unwrap_or_default(),
                    buffer_cap_bytes: buffer_cap_bytes__.unwrap_or_default(),
                    tap_path: tap_path__.unwrap_or_default(),
                    tap_decoder: tap_decoder__.unwrap_or_default(),
                    counter_path: counter_path__.unwrap_or_default(),
                    max_connections: max_connections__.unwrap_or_default(),
                    max_buffered_bytes: max_buffered_bytes__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ProxyJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for RateStepJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.rate_bits_s != 0. {
            len += 1;
        }
        if self.duration_ns != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.RateStepJob", len)?;
        if self.rate_bits_s != 0. {
            struct_ser.serialize_field("rate_bits_s", &self.rate_bits_s)?;
        }
        if self.duration_ns != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("duration_ns", ToString::to_string(&self.duration_ns).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for RateStepJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "rate_bits_s",
            "rateBitsS",
            "duration_ns",
            "durationNs",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            RateBitsS,
            DurationNs,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "rateBitsS" | "rate_bits_s" => Ok(GeneratedField::RateBitsS),
                            "durationNs" | "duration_ns" => Ok(GeneratedField::DurationNs),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = RateStepJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.RateStepJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<RateStepJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut rate_bits_s__ = None;
                let mut duration_ns__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::RateBitsS => {
                            if rate_bits_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rateBitsS"));
                            }
                            rate_bits_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::DurationNs => {
                            if duration_ns__.is_some() {
                                return Err(serde::de::Error::duplicate_field("durationNs"));
                            }
                            duration_ns__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(RateStepJob {
                    rate_bits_s: rate_bits_s__.unwrap_or_default(),
                    duration_ns: duration_ns__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.RateStepJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ReadPacing {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.rate_bytes_s != 0. {
            len += 1;
        }
        if self.jitter != 0. {
            len += 1;
        }
        if self.seed != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ReadPacing", len)?;
        if self.rate_bytes_s != 0. {
            struct_ser.serialize_field("rate_bytes_s", &self.rate_bytes_s)?;
        }
        if self.jitter != 0. {
            struct_ser.serialize_field("jitter", &self.jitter)?;
        }
        if self.seed != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("seed", ToString::to_string(&self.seed).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ReadPacing {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "rate_bytes_s",
            "rateBytesS",
            "jitter",
            "seed",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            RateBytesS,
            Jitter,
            Seed,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "rateBytesS" | "rate_bytes_s" => Ok(GeneratedField::RateBytesS),
                            "jitter" => Ok(GeneratedField::Jitter),
                            "seed" => Ok(GeneratedField::Seed),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ReadPacing;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ReadPacing")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ReadPacing, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut rate_bytes_s__ = None;
                let mut jitter__ = None;
                let mut seed__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::RateBytesS => {
                            if rate_bytes_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rateBytesS"));
                            }
                            rate_bytes_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Jitter => {
                            if jitter__.is_some() {
                                return Err(serde::de::Error::duplicate_field("jitter"));
                            }
                            jitter__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Seed => {
                            if seed__.is_some() {
                                return Err(serde::de::Error::duplicate_field("seed"));
                            }
                            seed__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(ReadPacing {
                    rate_bytes_s: rate_bytes_s__.unwrap_or_default(),
                    jitter: jitter__.unwrap_or_default(),
                    seed: seed__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ReadPacing", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Ready {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.ready {
            len += 1;
        }
        if self.pid != 0 {
            len += 1;
        }
        if self.port != 0 {
            len += 1;
        }
        if !self.stack.is_empty() {
            len += 1;
        }
        if !self.version.is_empty() {
            len += 1;
        }
        if self.worker {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Ready", len)?;
        if self.ready {
            struct_ser.serialize_field("ready", &self.ready)?;
        }
        if self.pid != 0 {
            struct_ser.serialize_field("pid", &self.pid)?;
        }
        if self.port != 0 {
            struct_ser.serialize_field("port", &self.port)?;
        }
        if !self.stack.is_empty() {
            struct_ser.serialize_field("stack", &self.stack)?;
        }
        if !self.version.is_empty() {
            struct_ser.serialize_field("version", &self.version)?;
        }
        if self.worker {
            struct_ser.serialize_field("worker", &self.worker)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Ready {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "ready",
            "pid",
            "port",
            "stack",
            "version",
            "worker",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Ready,
            Pid,
            Port,
            Stack,
            Version,
            Worker,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "ready" => Ok(GeneratedField::Ready),
                            "pid" => Ok(GeneratedField::Pid),
                            "port" => Ok(GeneratedField::Port),
                            "stack" => Ok(GeneratedField::Stack),
                            "version" => Ok(GeneratedField::Version),
                            "worker" => Ok(GeneratedField::Worker),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Ready;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Ready")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Ready, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut ready__ = None;
                let mut pid__ = None;
                let mut port__ = None;
                let mut stack__ = None;
                let mut version__ = None;
                let mut worker__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Ready => {
                            if ready__.is_some() {
                                return Err(serde::de::Error::duplicate_field("ready"));
                            }
                            ready__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Pid => {
                            if pid__.is_some() {
                                return Err(serde::de::Error::duplicate_field("pid"));
                            }
                            pid__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Port => {
                            if port__.is_some() {
                                return Err(serde::de::Error::duplicate_field("port"));
                            }
                            port__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Stack => {
                            if stack__.is_some() {
                                return Err(serde::de::Error::duplicate_field("stack"));
                            }
                            stack__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Version => {
                            if version__.is_some() {
                                return Err(serde::de::Error::duplicate_field("version"));
                            }
                            version__ = Some(map_.next_value()?);
                        }
                        GeneratedField::Worker => {
                            if worker__.is_some() {
                                return Err(serde::de::Error::duplicate_field("worker"));
                            }
                            worker__ = Some(map_.next_value()?);
                        }
                    }
                }
                Ok(Ready {
                    ready: ready__.unwrap_or_default(),
                    pid: pid__.unwrap_or_default(),
                    port: port__.unwrap_or_default(),
                    stack: stack__.unwrap_or_default(),
                    version: version__.unwrap_or_default(),
                    worker: worker__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Ready", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ServerAnswer {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.result.is_some() {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ServerAnswer", len)?;
        if let Some(v) = self.result.as_ref() {
            struct_ser.serialize_field("result", v)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ServerAnswer {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "result",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Result,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "result" => Ok(GeneratedField::Result),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ServerAnswer;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ServerAnswer")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ServerAnswer, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut result__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Result => {
                            if result__.is_some() {
                                return Err(serde::de::Error::duplicate_field("result"));
                            }
                            result__ = map_.next_value()?;
                        }
                    }
                }
                Ok(ServerAnswer {
                    result: result__,
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ServerAnswer", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ServerJob {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if !self.listen_host.is_empty() {
            len += 1;
        }
        if self.listen_port != 0 {
            len += 1;
        }
        if self.windows.is_some() {
            len += 1;
        }
        if !self.options.is_empty() {
            len += 1;
        }
        if self.download_budget_bytes != 0 {
            len += 1;
        }
        if self.shared_message_max_bytes != 0 {
            len += 1;
        }
        if self.message_cache_bytes != 0 {
            len += 1;
        }
        if self.max_message_bytes != 0 {
            len += 1;
        }
        if self.max_echo_bytes != 0 {
            len += 1;
        }
        if self.max_concurrent_streams != 0 {
            len += 1;
        }
        if self.workers != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ServerJob", len)?;
        if !self.listen_host.is_empty() {
            struct_ser.serialize_field("listen_host", &self.listen_host)?;
        }
        if self.listen_port != 0 {
            struct_ser.serialize_field("listen_port", &self.listen_port)?;
        }
        if let Some(v) = self.windows.as_ref() {
            struct_ser.serialize_field("windows", v)?;
        }
        if !self.options.is_empty() {
            struct_ser.serialize_field("options", &self.options)?;
        }
        if self.download_budget_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("download_budget_bytes", ToString::to_string(&self.download_budget_bytes).as_str())?;
        }
        if self.shared_message_max_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("shared_message_max_bytes", ToString::to_string(&self.shared_message_max_bytes).as_str())?;
        }
        if self.message_cache_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("message_cache_bytes", ToString::to_string(&self.message_cache_bytes).as_str())?;
        }
        if self.max_message_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("max_message_bytes", ToString::to_string(&self.max_message_bytes).as_str())?;
        }
        if self.max_echo_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("max_echo_bytes", ToString::to_string(&self.max_echo_bytes).as_str())?;
        }
        if self.max_concurrent_streams != 0 {
            struct_ser.serialize_field("max_concurrent_streams", &self.max_concurrent_streams)?;
        }
        if self.workers != 0 {
            struct_ser.serialize_field("workers", &self.workers)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ServerJob {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "listen_host",
            "listenHost",
            "listen_port",
            "listenPort",
            "windows",
            "options",
            "download_budget_bytes",
            "downloadBudgetBytes",
            "shared_message_max_bytes",
            "sharedMessageMaxBytes",
            "message_cache_bytes",
            "messageCacheBytes",
            "max_message_bytes",
            "maxMessageBytes",
            "max_echo_bytes",
            "maxEchoBytes",
            "max_concurrent_streams",
            "maxConcurrentStreams",
            "workers",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            ListenHost,
            ListenPort,
            Windows,
            Options,
            DownloadBudgetBytes,
            SharedMessageMaxBytes,
            MessageCacheBytes,
            MaxMessageBytes,
            MaxEchoBytes,
            MaxConcurrentStreams,
            Workers,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "listenHost" | "listen_host" => Ok(GeneratedField::ListenHost),
                            "listenPort" | "listen_port" => Ok(GeneratedField::ListenPort),
                            "windows" => Ok(GeneratedField::Windows),
                            "options" => Ok(GeneratedField::Options),
                            "downloadBudgetBytes" | "download_budget_bytes" => Ok(GeneratedField::DownloadBudgetBytes),
                            "sharedMessageMaxBytes" | "shared_message_max_bytes" => Ok(GeneratedField::SharedMessageMaxBytes),
                            "messageCacheBytes" | "message_cache_bytes" => Ok(GeneratedField::MessageCacheBytes),
                            "maxMessageBytes" | "max_message_bytes" => Ok(GeneratedField::MaxMessageBytes),
                            "maxEchoBytes" | "max_echo_bytes" => Ok(GeneratedField::MaxEchoBytes),
                            "maxConcurrentStreams" | "max_concurrent_streams" => Ok(GeneratedField::MaxConcurrentStreams),
                            "workers" => Ok(GeneratedField::Workers),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ServerJob;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ServerJob")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ServerJob, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut listen_host__ = None;
                let mut listen_port__ = None;
                let mut windows__ = None;
                let mut options__ = None;
                let mut download_budget_bytes__ = None;
                let mut shared_message_max_bytes__ = None;
                let mut message_cache_bytes__ = None;
                let mut max_message_bytes__ = None;
                let mut max_echo_bytes__ = None;
                let mut max_concurrent_streams__ = None;
                let mut workers__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::ListenHost => {
                            if listen_host__.is_some() {
                                return Err(serde::de::Error::duplicate_field("listenHost"));
                            }
                            listen_host__ = Some(map_.next_value()?);
                        }
                        GeneratedField::ListenPort => {
                            if listen_port__.is_some() {
                                return Err(serde::de::Error::duplicate_field("listenPort"));
                            }
                            listen_port__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Windows => {
                            if windows__.is_some() {
                                return Err(serde::de::Error::duplicate_field("windows"));
                            }
                            windows__ = map_.next_value()?;
                        }
                        GeneratedField::Options => {
                            if options__.is_some() {
                                return Err(serde::de::Error::duplicate_field("options"));
                            }
                            options__ = Some(map_.next_value()?);
                        }
                        GeneratedField::DownloadBudgetBytes => {
                            if download_budget_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("downloadBudgetBytes"));
                            }
                            download_budget_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::SharedMessageMaxBytes => {
                            if shared_message_max_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("sharedMessageMaxBytes"));
                            }
                            shared_message_max_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MessageCacheBytes => {
                            if message_cache_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("messageCacheBytes"));
                            }
                            message_cache_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MaxMessageBytes => {
                            if max_message_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxMessageBytes"));
                            }
                            max_message_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MaxEchoBytes => {
                            if max_echo_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxEchoBytes"));
                            }
                            max_echo_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::MaxConcurrentStreams => {
                            if max_concurrent_streams__.is_some() {
                                return Err(serde::de::Error::duplicate_field("maxConcurrentStreams"));
                            }
                            max_concurrent_streams__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Workers => {
                            if workers__.is_some() {
                                return Err(serde::de::Error::duplicate_field("workers"));
                            }
                            workers__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(ServerJob {
                    listen_host: listen_host__.unwrap_or_default(),
                    listen_port: listen_port__.unwrap_or_default(),
                    windows: windows__,
                    options: options__.unwrap_or_default(),
                    download_budget_bytes: download_budget_bytes__.unwrap_or_default(),
                    shared_message_max_bytes: shared_message_max_bytes__.unwrap_or_default(),
                    message_cache_bytes: message_cache_bytes__.unwrap_or_default(),
                    max_message_bytes: max_message_bytes__.unwrap_or_default(),
                    max_echo_bytes: max_echo_bytes__.unwrap_or_default(),
                    max_concurrent_streams: max_concurrent_streams__.unwrap_or_default(),
                    workers: workers__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ServerJob", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for ServerResult {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.rpcs != 0 {
            len += 1;
        }
        if self.refused != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.ServerResult", len)?;
        if self.rpcs != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("rpcs", ToString::to_string(&self.rpcs).as_str())?;
        }
        if self.refused != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("refused", ToString::to_string(&self.refused).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for ServerResult {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "rpcs",
            "refused",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Rpcs,
            Refused,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "rpcs" => Ok(GeneratedField::Rpcs),
                            "refused" => Ok(GeneratedField::Refused),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = ServerResult;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.ServerResult")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<ServerResult, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut rpcs__ = None;
                let mut refused__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Rpcs => {
                            if rpcs__.is_some() {
                                return Err(serde::de::Error::duplicate_field("rpcs"));
                            }
                            rpcs__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Refused => {
                            if refused__.is_some() {
                                return Err(serde::de::Error::duplicate_field("refused"));
                            }
                            refused__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(ServerResult {
                    rpcs: rpcs__.unwrap_or_default(),
                    refused: refused__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.ServerResult", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Unary {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.calls != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Unary", len)?;
        if self.calls != 0 {
            struct_ser.serialize_field("calls", &self.calls)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Unary {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "calls",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Calls,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "calls" => Ok(GeneratedField::Calls),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Unary;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Unary")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Unary, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut calls__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Calls => {
                            if calls__.is_some() {
                                return Err(serde::de::Error::duplicate_field("calls"));
                            }
                            calls__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(Unary {
                    calls: calls__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Unary", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Upload {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.timed_s != 0. {
            len += 1;
        }
        if self.messages != 0 {
            len += 1;
        }
        if self.call_timeout_s != 0. {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Upload", len)?;
        if self.timed_s != 0. {
            struct_ser.serialize_field("timed_s", &self.timed_s)?;
        }
        if self.messages != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("messages", ToString::to_string(&self.messages).as_str())?;
        }
        if self.call_timeout_s != 0. {
            struct_ser.serialize_field("call_timeout_s", &self.call_timeout_s)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Upload {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "timed_s",
            "timedS",
            "messages",
            "call_timeout_s",
            "callTimeoutS",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            TimedS,
            Messages,
            CallTimeoutS,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "timedS" | "timed_s" => Ok(GeneratedField::TimedS),
                            "messages" => Ok(GeneratedField::Messages),
                            "callTimeoutS" | "call_timeout_s" => Ok(GeneratedField::CallTimeoutS),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Upload;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Upload")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Upload, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut timed_s__ = None;
                let mut messages__ = None;
                let mut call_timeout_s__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::TimedS => {
                            if timed_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("timedS"));
                            }
                            timed_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::Messages => {
                            if messages__.is_some() {
                                return Err(serde::de::Error::duplicate_field("messages"));
                            }
                            messages__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::CallTimeoutS => {
                            if call_timeout_s__.is_some() {
                                return Err(serde::de::Error::duplicate_field("callTimeoutS"));
                            }
                            call_timeout_s__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(Upload {
                    timed_s: timed_s__.unwrap_or_default(),
                    messages: messages__.unwrap_or_default(),
                    call_timeout_s: call_timeout_s__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Upload", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for WindowStep {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.at_ms != 0. {
            len += 1;
        }
        if self.window_bytes != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.WindowStep", len)?;
        if self.at_ms != 0. {
            struct_ser.serialize_field("at_ms", &self.at_ms)?;
        }
        if self.window_bytes != 0 {
            #[allow(clippy::needless_borrow)]
            #[allow(clippy::needless_borrows_for_generic_args)]
            struct_ser.serialize_field("window_bytes", ToString::to_string(&self.window_bytes).as_str())?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for WindowStep {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "at_ms",
            "atMs",
            "window_bytes",
            "windowBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            AtMs,
            WindowBytes,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "atMs" | "at_ms" => Ok(GeneratedField::AtMs),
                            "windowBytes" | "window_bytes" => Ok(GeneratedField::WindowBytes),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = WindowStep;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.WindowStep")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<WindowStep, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut at_ms__ = None;
                let mut window_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::AtMs => {
                            if at_ms__.is_some() {
                                return Err(serde::de::Error::duplicate_field("atMs"));
                            }
                            at_ms__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::WindowBytes => {
                            if window_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("windowBytes"));
                            }
                            window_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(WindowStep {
                    at_ms: at_ms__.unwrap_or_default(),
                    window_bytes: window_bytes__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.WindowStep", FIELDS, GeneratedVisitor)
    }
}
impl serde::Serialize for Windows {
    #[allow(deprecated)]
    fn serialize<S>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error>
    where
        S: serde::Serializer,
    {
        use serde::ser::SerializeStruct;
        let mut len = 0;
        if self.r#static {
            len += 1;
        }
        if self.stream_bytes != 0 {
            len += 1;
        }
        if self.conn_bytes != 0 {
            len += 1;
        }
        let mut struct_ser = serializer.serialize_struct("kit.worker.Windows", len)?;
        if self.r#static {
            struct_ser.serialize_field("static", &self.r#static)?;
        }
        if self.stream_bytes != 0 {
            struct_ser.serialize_field("stream_bytes", &self.stream_bytes)?;
        }
        if self.conn_bytes != 0 {
            struct_ser.serialize_field("conn_bytes", &self.conn_bytes)?;
        }
        struct_ser.end()
    }
}
impl<'de> serde::Deserialize<'de> for Windows {
    #[allow(deprecated)]
    fn deserialize<D>(deserializer: D) -> std::result::Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        const FIELDS: &[&str] = &[
            "static",
            "stream_bytes",
            "streamBytes",
            "conn_bytes",
            "connBytes",
        ];

        #[allow(clippy::enum_variant_names)]
        enum GeneratedField {
            Static,
            StreamBytes,
            ConnBytes,
        }
        impl<'de> serde::Deserialize<'de> for GeneratedField {
            fn deserialize<D>(deserializer: D) -> std::result::Result<GeneratedField, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                struct GeneratedVisitor;

                impl serde::de::Visitor<'_> for GeneratedVisitor {
                    type Value = GeneratedField;

                    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(formatter, "expected one of: {:?}", &FIELDS)
                    }

                    #[allow(unused_variables)]
                    fn visit_str<E>(self, value: &str) -> std::result::Result<GeneratedField, E>
                    where
                        E: serde::de::Error,
                    {
                        match value {
                            "static" => Ok(GeneratedField::Static),
                            "streamBytes" | "stream_bytes" => Ok(GeneratedField::StreamBytes),
                            "connBytes" | "conn_bytes" => Ok(GeneratedField::ConnBytes),
                            _ => Err(serde::de::Error::unknown_field(value, FIELDS)),
                        }
                    }
                }
                deserializer.deserialize_identifier(GeneratedVisitor)
            }
        }
        struct GeneratedVisitor;
        impl<'de> serde::de::Visitor<'de> for GeneratedVisitor {
            type Value = Windows;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("struct kit.worker.Windows")
            }

            fn visit_map<V>(self, mut map_: V) -> std::result::Result<Windows, V::Error>
                where
                    V: serde::de::MapAccess<'de>,
            {
                let mut r#static__ = None;
                let mut stream_bytes__ = None;
                let mut conn_bytes__ = None;
                while let Some(k) = map_.next_key()? {
                    match k {
                        GeneratedField::Static => {
                            if r#static__.is_some() {
                                return Err(serde::de::Error::duplicate_field("static"));
                            }
                            r#static__ = Some(map_.next_value()?);
                        }
                        GeneratedField::StreamBytes => {
                            if stream_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("streamBytes"));
                            }
                            stream_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                        GeneratedField::ConnBytes => {
                            if conn_bytes__.is_some() {
                                return Err(serde::de::Error::duplicate_field("connBytes"));
                            }
                            conn_bytes__ = 
                                Some(map_.next_value::<::pbjson::private::NumberDeserialize<_>>()?.0)
                            ;
                        }
                    }
                }
                Ok(Windows {
                    r#static: r#static__.unwrap_or_default(),
                    stream_bytes: stream_bytes__.unwrap_or_default(),
                    conn_bytes: conn_bytes__.unwrap_or_default(),
                })
            }
        }
        deserializer.deserialize_struct("kit.worker.Windows", FIELDS, GeneratedVisitor)
    }
}
