import ArgumentParser
import PXCore
import PXStorage

// The values of px's enumerated options, parsed by ArgumentParser: an unknown value is a usage error
// that lists the valid ones, and --help shows them.

/// `--level`: `patient`, `study`, `series`, `image`, in any case (DICOM spells QueryRetrieveLevel
/// `IMAGE`, PS3.4 §C.6; `--level IMAGE` and `--level image` are the same).
extension QueryLevel: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }
}

/// `--model`: `study` or `patient` (the Study Root and Patient Root information models, PS3.4
/// §C.6.1-2), or `worklist` (Modality Worklist, PS3.4 Annex K: px-find only), in any case.
extension QueryModel: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }
}

/// px-find's `--format`: `pypx`, `dicom-json`, `ndjson`, `table`.
extension PXOutput.FindFormat: ExpressibleByArgument {}

/// px-listen's `--on-duplicate`: `keep`, `overwrite`, `rename`.
extension DuplicatePolicy: ExpressibleByArgument {}

/// px-sync's `--zip-deflate`: `spare`, `all`.
extension ZipDeflateMode: ExpressibleByArgument {}
