//! Eureka's compact documents (`X-Eureka-Accept: compact`), as its "mini" codecs write them: each
//! instance with only what a client needs to route (`MiniInstanceInfoMixIn`), in the codec's
//! key order, `lastUpdatedTimestamp` a number; `versions__delta` and `apps__hashcode` after the
//! applications; the XML on one line, escaped as Jackson's XML writer escapes.

use super::xml::{read_json, write_xml, Style, Value, XmlError};

/// An instance's keys in the compact form, in its order; the rest are left out.
const INSTANCE_KEYS: &[&str] = &[
    "instanceId",
    "app",
    "ipAddr",
    "vipAddress",
    "secureVipAddress",
    "dataCenterInfo",
    "hostName",
    "status",
    "lastUpdatedTimestamp",
    "actionType",
    "port",
    "securePort",
];

/// Jackson's XML writer: no indentation, `&` and `<` escaped in text, and `"` too in attributes.
const ONE_LINE: Style = Style {
    indent: false,
    text: |out, text| escape(out, text, false),
    attribute: |out, text| escape(out, text, true),
};

fn escape(out: &mut String, text: &str, attribute: bool) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' if attribute => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// The compact JSON of a full `{"applications":…}`, `{"application":…}` or `{"instance":…}`
/// document.
///
/// ```
/// use feign_eureka::model::{compact_json, Application, InstanceInfo};
///
/// let app = Application::new("orders", vec![InstanceInfo::new("orders", "h", "10.0.0.5", 8080)]);
/// let compact = compact_json(app.to_json().as_bytes())?;
/// assert_eq!(
///     String::from_utf8(compact).unwrap(),
///     r#"{"application":{"name":"ORDERS","instance":[{"app":"ORDERS","ipAddr":"10.0.0.5","dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},"hostName":"h","status":"UP","port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"}}]}}"#
/// );
/// # Ok::<(), feign_eureka::model::XmlError>(())
/// ```
pub fn compact_json(json: &[u8]) -> Result<Vec<u8>, XmlError> {
    let (name, value) = read_json(json)?;
    let root = Value::Object(vec![(name.clone(), compact(value, &name))]);
    Ok(serde_json::to_vec(&root)?)
}

/// The compact XML of a full JSON document (see [`compact_json`]).
pub fn compact_xml(json: &[u8]) -> Result<String, XmlError> {
    let (name, value) = read_json(json)?;
    let value = compact(value, &name);
    Ok(write_xml(&name, &value, &ONE_LINE))
}

/// `value`, found under `key`, in the compact form.
fn compact(value: Value, key: &str) -> Value {
    match (key, value) {
        (_, Value::List(items)) => {
            Value::List(items.into_iter().map(|item| compact(item, key)).collect())
        }
        ("applications", Value::Object(fields)) => {
            let (apps, rest): (Vec<_>, Vec<_>) =
                fields.into_iter().partition(|(k, _)| k == "application");
            let apps = apps
                .into_iter()
                .map(|(k, v)| (k, compact(v, "application")));
            Value::Object(apps.chain(rest).collect())
        }
        ("application", Value::Object(fields)) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| {
                    let v = if k == "instance" {
                        compact(v, "instance")
                    } else {
                        v
                    };
                    (k, v)
                })
                .collect(),
        ),
        ("instance", Value::Object(mut fields)) => Value::Object(
            INSTANCE_KEYS
                .iter()
                .filter_map(|wanted| {
                    let i = fields.iter().position(|(k, _)| k == wanted)?;
                    let (k, v) = fields.swap_remove(i);
                    let v = match (k.as_str(), v) {
                        ("lastUpdatedTimestamp", Value::Text(ms)) => {
                            ms.parse().map_or(Value::Text(ms), Value::Number)
                        }
                        (_, v) => v,
                    };
                    Some((k, v))
                })
                .collect(),
        ),
        (_, value) => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_list_applications_first_and_xml_is_one_line() {
        let json = br#"{"applications":{"versions__delta":"1","apps__hashcode":"UP_1_","application":[{"name":"A","instance":[{"instanceId":"a","hostName":"h<&>\"","app":"A","status":"UP","overriddenStatus":"UNKNOWN","port":{"$":80,"@enabled":"true"},"metadata":{"k":"v"},"lastUpdatedTimestamp":"17","actionType":"ADDED"}]}]}}"#;
        assert_eq!(
            String::from_utf8(compact_json(json).unwrap()).unwrap(),
            r#"{"applications":{"application":[{"name":"A","instance":[{"instanceId":"a","app":"A","hostName":"h<&>\"","status":"UP","lastUpdatedTimestamp":17,"actionType":"ADDED","port":{"$":80,"@enabled":"true"}}]}],"versions__delta":"1","apps__hashcode":"UP_1_"}}"#
        );
        assert_eq!(
            compact_xml(json).unwrap(),
            r#"<applications><application><name>A</name><instance><instanceId>a</instanceId><app>A</app><hostName>h&lt;&amp;>"</hostName><status>UP</status><lastUpdatedTimestamp>17</lastUpdatedTimestamp><actionType>ADDED</actionType><port enabled="true">80</port></instance></application><versions__delta>1</versions__delta><apps__hashcode>UP_1_</apps__hashcode></applications>"#
        );
    }
}
