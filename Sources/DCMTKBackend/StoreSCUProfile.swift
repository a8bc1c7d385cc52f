import DICOMData
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

/// The association negotiation profile storescu gets with `--config-file FILE PROFILE` (`-xf`), in the
/// format of DCMTK's storescu.cfg (`[[TransferSyntaxes]]`, `[[PresentationContexts]]`, `[[Profiles]]`;
/// SOP classes and transfer syntaxes given as UIDs): for each (SOP class, transfer syntax) the files have,
/// the same presentation contexts the native backend proposes (``DICOMData/TransferSyntax/sendingProposals``:
/// the file's own syntax alone, then its lossless fallbacks). Without it storescu proposes only uncompressed
/// syntaxes and tries to decompress every compressed file, which it cannot do for JPEG 2000 and others.
struct StoreSCUProfile: Sendable, Equatable {
    /// The profile's name in the file.
    static let name = "PX"
    /// The most presentation contexts one association proposes (PS3.8 §9.3.2.2: odd IDs 1 to 255).
    static let maximumContexts = 128

    /// The contexts, in the order first needed: abstract syntax and transfer syntax UIDs.
    private(set) var contexts: [Context] = []

    struct Context: Sendable, Hashable {
        var sopClassUID: String
        var transferSyntaxUIDs: [String]
    }

    /// The contexts `file` needs that the profile does not have yet.
    static func contexts(for file: PushFile) -> [Context] {
        TransferSyntax(uid: file.transferSyntaxUID).sendingProposals.map {
            Context(sopClassUID: file.sopClassUID, transferSyntaxUIDs: $0.map(\.uid))
        }
    }

    /// Whether the file's SOP class and transfer syntax are UIDs (digits and dots, PS3.5 §9.1) that can be
    /// written into the profile as they are.
    static func canPropose(_ file: PushFile) -> Bool {
        [file.sopClassUID, file.transferSyntaxUID].allSatisfy { uid in
            !uid.isEmpty && uid.utf8.count <= 64
                && uid.utf8.allSatisfy { $0 == UInt8(ascii: ".") || (0x30...0x39).contains($0) }
        }
    }

    /// Adds the contexts `file` needs; `false`, leaving the profile as it was, when that would go past
    /// ``maximumContexts``.
    mutating func add(_ file: PushFile) -> Bool {
        let new = Self.contexts(for: file).filter { !self.contexts.contains($0) }
        guard self.contexts.count + new.count <= Self.maximumContexts else { return false }
        self.contexts += new
        return true
    }

    /// The configuration file's text.
    var text: String {
        var syntaxLists: [[String]] = []
        for context in contexts where !syntaxLists.contains(context.transferSyntaxUIDs) {
            syntaxLists.append(context.transferSyntaxUIDs)
        }
        var lines = ["# px-push: the presentation contexts of the files of one storescu run", "[[TransferSyntaxes]]"]
        for (number, list) in syntaxLists.enumerated() {
            lines.append("[TS\(number + 1)]")
            for (position, uid) in list.enumerated() { lines.append("TransferSyntax\(position + 1) = \(uid)") }
        }
        lines += ["[[PresentationContexts]]", "[\(Self.name)]"]
        for (number, context) in contexts.enumerated() {
            let list = (syntaxLists.firstIndex(of: context.transferSyntaxUIDs) ?? 0) + 1
            lines.append("PresentationContext\(number + 1) = \(context.sopClassUID)\\TS\(list)")
        }
        lines += ["[[Profiles]]", "[\(Self.name)]", "PresentationContexts = \(Self.name)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the profile to a fresh file of its own (mode 0600) in `directory`.
    /// - Throws: ``PXError`` (code `io`) when it cannot be written.
    func write(in directory: TemporaryDirectory, number: Int) throws(PXError) -> String {
        let path = directory.path + "/storescu-\(number).cfg"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PXError.io("cannot create storescu's profile (errno \(errno))", path: path) }
        let bytes = Array(self.text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let writeErrno = errno
        close(fd)
        guard written == bytes.count else {
            throw PXError.io("cannot write storescu's profile (errno \(writeErrno))", path: path)
        }
        return path
    }
}
