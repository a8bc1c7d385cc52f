import Foundation

/// Removes from pydicom's `to_json_dict` output the differences that are pydicom's choices, not
/// decoding, so what remains compares values:
/// - group length elements (gggg,0000), which pydicom writes and dcm2json and px leave out;
/// - trailing spaces it keeps in values, and empty strings where the JSON Model has null;
/// - trailing carets in person names, insignificant by PS3.5 §6.2.1 (dcm2json drops them too);
/// - elements px keeps as UN (as DCMTK does) that pydicom converts through its dictionary.
enum PydicomNormalization {
    static func normalize(_ reference: Any, against px: Any) -> Any {
        guard let ref = reference as? [String: Any] else { return reference }
        let ours = px as? [String: Any] ?? [:]
        var out: [String: Any] = [:]
        for (key, value) in ref {
            if key.hasSuffix("0000") { continue }
            guard var attribute = value as? [String: Any] else { continue }
            let oursAttribute = ours[key] as? [String: Any]
            if let ourVR = oursAttribute?["vr"] as? String, ourVR == "UN", attribute["vr"] as? String != "UN" {
                if let ourAttribute = oursAttribute { out[key] = ourAttribute }
                continue
            }
            if var values = attribute["Value"] as? [Any] {
                let vr = attribute["vr"] as? String
                let ourValues = oursAttribute?["Value"] as? [Any] ?? []
                values = values.enumerated().map { index, v -> Any in
                    if let s = v as? String {
                        let trimmed = s.replacingOccurrences(of: " +$", with: "", options: .regularExpression)
                        return trimmed.isEmpty ? NSNull() : trimmed
                    }
                    if vr == "PN", let groups = v as? [String: Any] {
                        var cleaned: [String: Any] = [:]
                        for (g, text) in groups {
                            if let t = text as? String {
                                let stripped = t.replacingOccurrences(
                                    of: "\\^+$", with: "", options: .regularExpression)
                                if !stripped.isEmpty { cleaned[g] = stripped }
                            }
                        }
                        return cleaned.isEmpty ? NSNull() : cleaned
                    }
                    if vr == "SQ", let item = v as? [String: Any] {
                        return normalize(item, against: index < ourValues.count ? ourValues[index] : [:])
                    }
                    return v
                }
                if values.allSatisfy({ $0 is NSNull }) {
                    attribute["Value"] = nil
                } else {
                    attribute["Value"] = values
                }
            }
            out[key] = attribute
        }
        return out
    }
}
