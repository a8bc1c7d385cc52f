import PXCore
import Testing

/// ``PXOutput/displayWidth(_:)-(String)``: the terminal columns px's table and tree give a text.
@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("Doe^John", 8), ("山田^太郎", 9), ("홍^길동", 7), ("ﾔﾏﾀﾞ", 4), ("やまだ", 6), ("Ｆｕｌｌ", 8), ("e\u{301}", 1),
        ("\u{1100}\u{1161}\u{11A8}", 2), ("Müller", 6), ("", 0), ("a\u{200D}b", 2),
    ])
    func widths(text: String, width: Int) {
        #expect(PXOutput.displayWidth(text) == width, "\(text)")
    }

    @Test func fitPadsAndCutsByWidth() {
        #expect(PXOutput.fit("山田", width: 6) == "山田  ")
        #expect(PXOutput.fit("山田太郎", width: 5) == "山田…")
        #expect(PXOutput.displayWidth(PXOutput.fit("山田太郎", width: 6)) == 6)
        #expect(PXOutput.fit("abcdef", width: 4) == "abc…")
    }
}
