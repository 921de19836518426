//! A `docker run` of an image a platform file knows (`recognize.images`: a NIM, a DJL LMI or a
//! Runpod worker image), or a Dockerfile built on one, with no engine command of its own: the
//! container's server reads its settings from env, so it is read as that platform reads such a
//! container in a pod or a compose service (`by_platform::container`).

use super::expand::Field;
use super::walk::Walker;
use crate::source::{Loc, SourceFile};
use crate::yaml::{Node, Value};

impl Walker {
    /// The launches, or the finding saying why there is none, of a container started from
    /// `image` with the `-e NAME=value` variables `env`, by the platform that knows the image;
    /// nothing where none does.
    pub(super) fn image_platform(&mut self, image: &str, at: Loc, env: &[(String, Field)]) {
        let text = |t: String, loc: Loc| Node {
            value: Value::Str(t),
            loc,
        };
        let key = |k: &str, loc: Loc| text(k.to_string(), loc);
        let items = env
            .iter()
            .map(|(name, value)| Node {
                value: Value::Map(vec![
                    (key("name", value.loc), text(name.clone(), value.loc)),
                    (key("value", value.loc), text(value.text(), value.loc)),
                ]),
                loc: value.loc,
            })
            .collect();
        let env_list = Node {
            value: Value::Seq(items),
            loc: at,
        };
        let container = Node {
            value: Value::Map(vec![
                (key("image", at), text(image.to_string(), at)),
                (key("env", at), env_list),
            ]),
            loc: at,
        };
        // No file text stands behind these nodes: their words are read from the values.
        let src = SourceFile::new("", "");
        let found = crate::extract::by_platform::container(self.scope.file, &src, &container);
        if let Some((_, out)) = found {
            self.launches.extend(out.launches);
            self.findings.extend(out.findings);
        }
    }
}
