//! The parts of an admission.k8s.io/v1 AdmissionReview that a decision reads, parsed once from
//! the body: the request's identity fields, and the object as the JSON text it was sent as
//! (borrowed from the body while parsing, then one copy), so the body can be dropped before the
//! review and no generic JSON tree of the object is ever built. Fields are named as in the API
//! (k8s.io/api admission/v1 types.go, `AdmissionRequest`).

use serde::Deserialize;
use serde_json::value::RawValue;

/// One AdmissionRequest, as far as kvlint reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub uid: String,
    /// `request.kind.kind`: the kind of the object, `Deployment`.
    pub kind: String,
    pub name: String,
    pub namespace: String,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// `scale`, `status`...; empty for the object itself.
    pub sub_resource: String,
    /// `request.userInfo.username`.
    pub username: String,
    /// `request.object` as JSON text; `None` when absent or null (a deletion).
    pub object: Option<String>,
}

impl Review {
    /// Whether the decision checks the object: the creation or update of a whole object.
    pub fn checked(&self) -> bool {
        matches!(self.operation.as_str(), "CREATE" | "UPDATE") && self.sub_resource.is_empty()
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(borrow, default)]
    request: Option<Request<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    uid: String,
    kind: Kind,
    name: Option<String>,
    namespace: Option<String>,
    operation: String,
    sub_resource: Option<String>,
    #[serde(default)]
    user_info: UserInfo,
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Kind {
    kind: String,
}

#[derive(Deserialize, Default)]
struct UserInfo {
    username: Option<String>,
}

/// The review in `body`, or the reason it is not an admission.k8s.io/v1 AdmissionReview with a
/// request.
pub fn parse(body: &[u8]) -> Result<Review, String> {
    let envelope: Envelope = serde_json::from_slice(body)
        .map_err(|e| format!("not an admission.k8s.io/v1 AdmissionReview: {e}"))?;
    let (api_version, kind) = (&envelope.api_version, &envelope.kind);
    if kind != "AdmissionReview" || api_version != "admission.k8s.io/v1" {
        return Err(format!(
            "expected apiVersion admission.k8s.io/v1, kind AdmissionReview; got {api_version:?}, {kind:?}"
        ));
    }
    let r = envelope
        .request
        .ok_or_else(|| "the AdmissionReview has no request".to_string())?;
    Ok(Review {
        uid: r.uid,
        kind: r.kind.kind,
        name: r.name.unwrap_or_default(),
        namespace: r.namespace.unwrap_or_default(),
        operation: r.operation,
        sub_resource: r.sub_resource.unwrap_or_default(),
        username: r.user_info.username.unwrap_or_default(),
        object: r.object.map(|o| o.get().to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_object_is_kept_as_sent_and_the_rest_is_not_read() {
        let body = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
            "uid":"u1","kind":{"group":"apps","version":"v1","kind":"Deployment"},
            "resource":{"group":"apps","version":"v1","resource":"deployments"},
            "name":"d","namespace":"llm","operation":"UPDATE","userInfo":{"username":"system:x"},
            "object":{"kind": "Deployment", "spec": {}},
            "oldObject":{"x":[[[[[[[[[[[[1]]]]]]]]]]]]},"dryRun":false}}"#;
        let r = parse(body).expect("review");
        assert_eq!(
            r,
            Review {
                uid: "u1".into(),
                kind: "Deployment".into(),
                name: "d".into(),
                namespace: "llm".into(),
                operation: "UPDATE".into(),
                sub_resource: String::new(),
                username: "system:x".into(),
                object: Some(r#"{"kind": "Deployment", "spec": {}}"#.into()),
            }
        );
        assert!(r.checked());
    }

    #[test]
    fn deletions_and_subresources_are_not_checked() {
        let review = |rest: &str| {
            let body = format!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"kind":"Pod"}},{rest}}}}}"#
            );
            parse(body.as_bytes()).expect("review")
        };
        let deleted = review(r#""operation":"DELETE","object":null"#);
        assert_eq!(deleted.object, None);
        assert!(!deleted.checked());
        assert!(!review(r#""operation":"UPDATE","subResource":"scale","object":{}"#).checked());
    }

    #[test]
    fn what_is_not_an_admission_review_says_why() {
        for (body, reason) in [
            (&b"{not json"[..], "not an admission.k8s.io/v1 AdmissionReview"),
            (br#"{"apiVersion":"v1","kind":"Pod"}"#, "expected apiVersion"),
            (
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
                "has no request",
            ),
            (
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"kind":"Pod"},"operation":"CREATE"}}"#,
                "missing field `uid`",
            ),
        ] {
            let e = parse(body).expect_err("refused");
            assert!(e.contains(reason), "{e}");
        }
    }
}
