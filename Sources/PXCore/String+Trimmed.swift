extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    public var trimmed: Substring {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}
