import Foundation

/// Compares two JSON documents the way the differential tests need: object members in any order,
/// numbers by value (with a relative tolerance for 32-bit floats), everything else exactly.
enum JSONComparison {
    /// Paths below which differences are not reported (e.g. a tag known to differ for a stated reason).
    static func differences(
        _ ours: Any?, _ theirs: Any?, path: String = "", ignoring: (String) -> Bool = { _ in false }
    ) -> [String] {
        if ignoring(path) { return [] }
        switch (ours, theirs) {
        case (let a as [String: Any], let b as [String: Any]):
            var out: [String] = []
            for key in Set(a.keys).union(b.keys).sorted() {
                let sub = path + "/" + key
                if ignoring(sub) { continue }
                switch (a[key], b[key]) {
                case (nil, _): out.append("\(sub): missing in px")
                case (_, nil): out.append("\(sub): only in px")
                case (let x, let y): out += differences(x, y, path: sub, ignoring: ignoring)
                }
            }
            return out
        case (let a as [Any], let b as [Any]):
            guard a.count == b.count else { return ["\(path): \(a.count) values in px, \(b.count) in reference"] }
            return zip(a, b).enumerated().flatMap {
                differences($1.0, $1.1, path: "\(path)[\($0)]", ignoring: ignoring)
            }
        case (let a as NSNumber, let b as NSNumber):
            let x = a.doubleValue
            let y = b.doubleValue
            if x == y || abs(x - y) <= 1e-6 * max(abs(x), abs(y)) { return [] }
            return ["\(path): \(a) in px, \(b) in reference"]
        case (let a as String, let b as String):
            return a == b ? [] : ["\(path): \(a.debugDescription) in px, \(b.debugDescription) in reference"]
        case (is NSNull, is NSNull):
            return []
        default:
            return ["\(path): \(String(describing: ours)) in px, \(String(describing: theirs)) in reference"]
        }
    }

    static func parse(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }
}
