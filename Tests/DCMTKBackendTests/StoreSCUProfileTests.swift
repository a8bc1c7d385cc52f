import DICOMData
import PXCore
import Testing

@testable import DCMTKBackend

/// storescu's negotiation profile (`-xf FILE PX`, DCMTK's storescu.cfg format): the native backend's
/// proposals for the files of one run (issue 20).
@Suite(.timeLimit(.minutes(2))) struct StoreSCUProfileTests {
    static let secondaryCapture = "1.2.840.10008.5.1.4.1.1.7"
    static let ct = "1.2.840.10008.5.1.4.1.1.2"

    static func file(_ sopClass: String, _ syntax: String, _ name: String = "f.dcm") -> PushFile {
        PushFile(path: "/data/" + name, sopClassUID: sopClass, sopInstanceUID: "1.2.3", transferSyntaxUID: syntax)
    }

    @Test("each file's own syntax alone, then its lossless fallbacks; compressed files have none")
    func profileText() {
        var profile = StoreSCUProfile()
        let added = [
            Self.file(Self.secondaryCapture, "1.2.840.10008.1.2.4.91"), Self.file(Self.ct, "1.2.840.10008.1.2.2"),
            Self.file(Self.ct, "1.2.840.10008.1.2.2", "again.dcm"),
            Self.file(Self.secondaryCapture, "1.2.840.10008.1.2.1.99"),
        ].map { profile.add($0) }
        #expect(added == [true, true, true, true])
        #expect(
            profile.text == """
                # px-push: the presentation contexts of the files of one storescu run
                [[TransferSyntaxes]]
                [TS1]
                TransferSyntax1 = 1.2.840.10008.1.2.4.91
                [TS2]
                TransferSyntax1 = 1.2.840.10008.1.2.2
                [TS3]
                TransferSyntax1 = 1.2.840.10008.1.2.1
                TransferSyntax2 = 1.2.840.10008.1.2
                [TS4]
                TransferSyntax1 = 1.2.840.10008.1.2.1.99
                [[PresentationContexts]]
                [PX]
                PresentationContext1 = 1.2.840.10008.5.1.4.1.1.7\\TS1
                PresentationContext2 = 1.2.840.10008.5.1.4.1.1.2\\TS2
                PresentationContext3 = 1.2.840.10008.5.1.4.1.1.2\\TS3
                PresentationContext4 = 1.2.840.10008.5.1.4.1.1.7\\TS4
                PresentationContext5 = 1.2.840.10008.5.1.4.1.1.7\\TS3
                [[Profiles]]
                [PX]
                PresentationContexts = PX

                """)
    }

    @Test("a run whose files need more than 128 contexts is split; a non-UID cannot be proposed")
    func limits() {
        let files = (0..<100).map { Self.file("1.2.826.0.1.3680043.10.543.\($0)", "1.2.840.10008.1.2.1", "\($0).dcm") }
        // Two contexts per file: 64 files per storescu run.
        let batches = DCMTKBackend.batches(Array(files.indices), files: PushFiles(files), limit: 512 * 1024)
        #expect(batches.map(\.count) == [64, 36])
        #expect(!StoreSCUProfile.canPropose(Self.file("1.2.3\nTransferSyntax9 = x", "1.2.840.10008.1.2")))
        #expect(StoreSCUProfile.canPropose(Self.file(Self.ct, "1.2.840.10008.1.2.4.50")))
    }
}
