import ArgumentParser
import PXCore
import PXPlaces
import PXStorage

/// px-sync's own options (the query keys are ``QueryOptions``).
public struct SyncOptions: ParsableArguments {
    @Argument(help: "SOURCE... DEST: places (see PLACES above); the last one is the destination.")
    public var places: [String] = []

    @Option(
        name: .customLong("also-to"),
        help: "A further destination (repeat for more): each selected study is synced into DEST and into these.")
    public var alsoTo: [String] = []

    @Option(
        name: .customLong("from-file"), help: "A CSV file with a PatientID, AccessionNumber or StudyInstanceUID column."
    )
    public var fromFile: String?

    @Option(
        name: .customShort("s"),
        help: ArgumentHelp(
            "dcm: a source place (repeatable); the places given are then all destinations.", valueName: "place"))
    public var sources: [String] = []

    @Option(
        name: .customShort("q"),
        help: ArgumentHelp("dcm: a query key Keyword=value (repeatable), as px-find's -k.", valueName: "key"))
    public var dcmKeys: [String] = []

    @Flag(
        name: [.long, .customLong("force-all")],
        help: "Transfer every selected study, even what the destination already holds (dcm: --force-all).")
    public var force = false

    @Flag(name: .customLong("dry-run"), help: "Print the plan (planned and skipped events), transfer nothing.")
    public var dryRun = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Audit: also compare the bytes (size, CRC-32) of instances both folder or zip places hold.",
            discussion: "Every run compares SOP Instance UIDs; --verify reads each file of a folder place (a zip "
                + "place's checksums are in its archives) and fails a study whose copies differ "
                + "(contentMismatch), without overwriting either."))
    public var verify = false

    @Option(name: .long, help: "Studies transferred at once (one association each).")
    public var parallel = 4

    @Option(name: .long, help: "C-STOREs outstanding on each push (asynchronous operations window).")
    public var window: UInt16 = PushRequest.defaultWindow

    @Option(
        name: .long,
        help: "Node to folder: get (C-GET), move (C-MOVE to the receiver) or auto (C-GET, C-MOVE when refused).")
    public var retrieve: String = "auto"

    @Option(name: .customLong("receiver-port"), help: "Port of px-sync's own C-STORE receiver for C-MOVE (0: none).")
    public var receiverPort: Int?

    @Option(name: .customLong("receiver-aet"), help: "AE title of that receiver, as the source node knows it.")
    public var receiverAETitle: String = "PXSYNC"

    @Option(name: .customLong("aet"), help: "Calling AE title (default: [local] ae_title from the config, else PXSCU).")
    public var callingAETitle: String?

    @Option(name: .long, help: "Folder destination: layout template of new files (default pypx's tree).")
    public var layout: String?

    @Option(
        name: .customLong("zip-deflate"),
        help: ArgumentHelp(
            "Zip destination: deflate with spare CPU only, or every instance.",
            discussion: "With spare, instances a retrieval (node or DICOMweb source) places are deflated while "
                + "the study arrives, at the lowest CPU priority, on the cores the transfer leaves (all but two: "
                + "none on a two-core machine), and those whose deflate has not started when the study has "
                + "arrived are stored uncompressed in its zip, so writing the zip never waits for compression "
                + "(a larger zip, sooner); with all, every instance of an uncompressed transfer syntax is "
                + "deflated first, on every core (a smaller zip, later). Instances of compressed transfer "
                + "syntaxes are stored either way; a folder or zip source is deflated on every core in both.",
            valueName: "mode"))
    public var zipDeflate: ZipDeflateMode = .spare

    @Option(
        name: .customLong("lock-timeout"),
        help: ArgumentHelp(
            "Seconds to wait while another px-sync writes the folder or zip destination (default 600).",
            discussion: "A run locks its folder and zip destinations (DEST/.px/lock) while it plans and "
                + "transfers; a second run into one of them waits, then fails with placeBusy (exit 75)."))
    public var lockTimeout: Double = Double(SyncEngine.Options.defaultLockTimeout.components.seconds)

    public init() {}

    public func validate() throws {
        guard !places.isEmpty else {
            throw ValidationError("give SOURCE... DEST, or pipe px-find's output into px-sync DEST")
        }
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard window >= 1 else { throw ValidationError("--window must be at least 1") }
        guard lockTimeout >= 0, lockTimeout <= 31_536_000 else {
            throw ValidationError("--lock-timeout must be 0 to 31536000 seconds (a year)")
        }
        guard SyncTransfer.Retrieve(rawValue: retrieve) != nil else {
            throw ValidationError("--retrieve must be auto, get or move")
        }
        if let receiverPort, !(1...65535).contains(receiverPort) {
            throw ValidationError("--receiver-port must be 1-65535")
        }
        do { try AETitle.validate(receiverAETitle, role: "--receiver-aet") } catch {
            throw ValidationError(error.message)
        }
        if let callingAETitle {
            do { try AETitle.validate(callingAETitle, role: "--aet") } catch { throw ValidationError(error.message) }
        }
    }
}
