/// A DA value, `YYYYMMDD` (PS3.5 §6.2); also accepts the ACR-NEMA form `YYYY.MM.DD`.
public struct DICOMDate: Hashable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init?(_ text: String) {
        let digits = text.filter { $0 != "." }
        guard digits.count == 8, digits.allSatisfy(\.isASCII), let value = Int(digits) else { return nil }
        year = value / 10000
        month = value / 100 % 100
        day = value % 100
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
    }

    /// ISO 8601, `YYYY-MM-DD`.
    public var description: String {
        func pad(_ v: Int, _ n: Int) -> String {
            String(repeating: "0", count: max(0, n - String(v).count)) + String(v)
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// A TM value, `HHMMSS.FFFFFF` with optional trailing parts (PS3.5 §6.2).
public struct DICOMTime: Hashable, Sendable {
    public var hour: Int
    public var minute: Int
    public var second: Int
    public var fraction: Double

    public init?(_ text: String) {
        let t = text.filter { $0 != ":" }
        let parts = t.split(separator: ".", maxSplits: 1)
        guard let whole = parts.first, whole.count >= 2, whole.count <= 6, whole.count % 2 == 0,
            whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        let chars = Array(whole)
        hour = Int(String(chars[0..<2])) ?? 0
        minute = chars.count >= 4 ? Int(String(chars[2..<4])) ?? 0 : 0
        second = chars.count >= 6 ? Int(String(chars[4..<6])) ?? 0 : 0
        fraction = parts.count > 1 ? Double("0." + parts[1]) ?? 0 : 0
        guard hour < 24, minute < 60, second < 61 else { return nil }
    }
}

/// A DT value, `YYYYMMDDHHMMSS.FFFFFF&ZZXX` with optional trailing parts (PS3.5 §6.2).
public struct DICOMDateTime: Hashable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var time: DICOMTime?
    /// The UTC offset in minutes, when the value has one (`+0100` gives 60).
    public var utcOffsetMinutes: Int?

    public init?(_ text: String) {
        var body = Substring(text)
        utcOffsetMinutes = nil
        if let sign = body.lastIndex(where: { $0 == "+" || $0 == "-" }),
            body.distance(from: sign, to: body.endIndex) == 5
        {
            let digits = body[body.index(after: sign)...]
            guard let v = Int(digits), digits.allSatisfy(\.isNumber) else { return nil }
            utcOffsetMinutes = (body[sign] == "-" ? -1 : 1) * (v / 100 * 60 + v % 100)
            body = body[..<sign]
        }
        let chars = Array(body)
        guard chars.count >= 4, chars.prefix(min(chars.count, 8)).allSatisfy({ $0.isASCII && $0.isNumber }),
            let y = Int(String(chars[0..<4]))
        else { return nil }
        year = y
        month = chars.count >= 6 ? Int(String(chars[4..<6])) ?? 0 : 1
        day = chars.count >= 8 ? Int(String(chars[6..<8])) ?? 0 : 1
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        if chars.count > 8 {
            guard let t = DICOMTime(String(chars[8...])) else { return nil }
            time = t
        } else {
            time = nil
        }
    }
}
