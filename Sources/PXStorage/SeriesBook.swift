import DICOMData
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The names of pypx's bookkeeping files in a tree (``SeriesBook``): not instances, so a walker of a place that
/// indexes instances passes over them.
public enum PypxInfoFile {
    public static let patient = "patient.info"
    public static let study = "study.info"
    public static let series = "series.info"
    public static let receiving = "receiving.series"
    /// All four.
    public static let names: Set<String> = [patient, study, series, receiving]
}

/// Keeps pypx's completion files and decides when a series is complete.
///
/// For each series folder (pypx's tree, issue 5): `patient.info` and `study.info` in the patient and
/// study folders (`[PATIENT] patientid, patientname, location`; `[STUDY] studydescription, studydate,
/// studyinstanceuid, location`), and `receiving.series` in the series folder while instances arrive
/// (`[SERIES] seriesdescription, seriesdate, seriesinstanceuid, location`). A series is complete when
/// every association that brought instances into it has ended, or when no instance arrived for the
/// series timeout (measured on the injected ``Clock``); then `receiving.series` becomes `series.info`
/// (with `instances = N` added) and a ``SeriesCompletion`` is emitted, once. A series that receives
/// more instances later is reopened (`series.info` becomes `receiving.series` again) and completes again.
///
/// With a custom layout of other than four components only the series file is kept (in the file's
/// folder). Info files are written to a temporary name and renamed, so a reader never sees half a file;
/// like the instances, they are written relative to the folders' descriptors (``StorageRoot``) and
/// never through a symbolic link.
public actor SeriesBook<C: Clock> where C.Duration == Duration {
    private struct Open {
        var facts: SeriesFacts
        var directory: String
        var folders: [String]
        var instances: Int
        var associations: Set<UInt64>
        var lastActivity: C.Instant
    }

    private let storage: StorageRoot
    private let seriesTimeout: Duration?
    private let clock: C
    private let logger: Logger
    private let emit: @Sendable (SeriesCompletion) -> Void
    private var receiving: [String: Open] = [:]
    private var knownInfo: Set<String> = []

    /// - Parameters:
    ///   - storage: the tree's root (the placer's ``InstancePlacer/storage``).
    ///   - seriesTimeout: silence after which a series is complete; `nil` for none.
    ///   - clock: measures that silence and paces ``runTimer()``.
    ///   - emit: receives a ``SeriesCompletion`` per completed series.
    public init(
        storage: StorageRoot, seriesTimeout: Duration?, clock: C, logger: Logger = Logger(label: "px.series"),
        emit: @escaping @Sendable (SeriesCompletion) -> Void
    ) {
        self.storage = storage
        self.seriesTimeout = seriesTimeout
        self.clock = clock
        self.logger = logger
        self.emit = emit
    }

    /// Records a placed instance; opens its series (writing the info files) on the first one.
    public func added(_ placement: InstancePlacer.Placement, facts: @autoclosure () -> SeriesFacts, association: UInt64)
    {
        let directories = placement.directories
        guard let seriesDirectory = directories.last else { return }
        let now = clock.now
        if var entry = receiving[seriesDirectory] {
            entry.instances += 1
            entry.associations.insert(association)
            entry.lastActivity = now
            receiving[seriesDirectory] = entry
            return
        }
        let facts = facts()
        let folders = placement.folders
        receiving[seriesDirectory] = Open(
            facts: facts, directory: seriesDirectory, folders: folders, instances: 1, associations: [association],
            lastActivity: now)
        if directories.count == 3 {
            writeOnce(
                Array(folders.prefix(1)), PypxInfoFile.patient,
                [
                    "[PATIENT]", "patientid = \(facts.patientID)", "patientname = \(facts.patientName)",
                    "location = \(directories[0])",
                ])
            writeOnce(
                Array(folders.prefix(2)), PypxInfoFile.study,
                [
                    "[STUDY]", "studydescription = \(facts.studyDescription)", "studydate = \(facts.studyDate)",
                    "studyinstanceuid = \(facts.studyUID)", "location = \(directories[1])",
                ])
        }
        guard let folder = openFolder(folders, PypxInfoFile.receiving) else { return }
        unlinkat(folder.descriptor, PypxInfoFile.series, 0)
        write(folder, PypxInfoFile.receiving, seriesLines(facts, directory: seriesDirectory, instances: nil))
    }

    /// An association ended: its series with no other association still sending are complete.
    public func associationEnded(_ association: UInt64) {
        for (key, var entry) in receiving where entry.associations.contains(association) {
            entry.associations.remove(association)
            if entry.associations.isEmpty {
                complete(key, reason: "association")
            } else {
                receiving[key] = entry
            }
        }
    }

    /// Completes the series idle for the series timeout or longer.
    public func sweep() {
        guard let seriesTimeout else { return }
        let now = clock.now
        for (key, entry) in receiving where entry.lastActivity.duration(to: now) >= seriesTimeout {
            complete(key, reason: "timeout")
        }
    }

    /// Sweeps every quarter of the series timeout (at most every second) until cancelled.
    public func runTimer() async {
        guard let seriesTimeout else { return }
        let period = min(seriesTimeout / 4, .seconds(1))
        while !Task.isCancelled {
            do { try await clock.sleep(for: period) } catch { return }
            sweep()
        }
    }

    /// Series still receiving (their folders keep `receiving.series`).
    public var openSeries: Int { receiving.count }

    private func complete(_ key: String, reason: String) {
        guard let entry = receiving.removeValue(forKey: key) else { return }
        if let folder = openFolder(entry.folders, PypxInfoFile.series) {
            write(
                folder, PypxInfoFile.series,
                seriesLines(entry.facts, directory: entry.directory, instances: entry.instances))
            unlinkat(folder.descriptor, PypxInfoFile.receiving, 0)
        }
        emit(
            SeriesCompletion(
                directory: entry.directory, seriesInstanceUID: entry.facts.seriesUID,
                studyInstanceUID: entry.facts.studyUID,
                patientID: entry.facts.patientID, instances: entry.instances, reason: reason))
    }

    private func seriesLines(_ facts: SeriesFacts, directory: String, instances: Int?) -> [String] {
        var lines = [
            "[SERIES]", "seriesdescription = \(facts.seriesDescription)", "seriesdate = \(facts.seriesDate)",
            "seriesinstanceuid = \(facts.seriesUID)", "location = \(directory)",
        ]
        if let instances { lines.append("instances = \(instances)") }
        return lines
    }

    /// The folder `folders` (which placement made), or `nil` after a warning.
    private func openFolder(_ folders: [String], _ name: String) -> StorageRoot.Folder? {
        do {
            return try storage.folder(folders, create: false)
        } catch {
            logger.warning("cannot write an info file", metadata: ["file": "\(name)", "error": "\(error)"])
            return nil
        }
    }

    private func writeOnce(_ folders: [String], _ name: String, _ lines: [String]) {
        let key = folders.joined(separator: "/") + "/" + name
        guard !knownInfo.contains(key) else { return }
        knownInfo.insert(key)
        guard let folder = openFolder(folders, name) else { return }
        var info = stat()
        if fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return }
        write(folder, name, lines)
    }

    /// Writes `name` in `folder` through a temporary name and a rename, neither following a link.
    private func write(_ folder: StorageRoot.Folder, _ name: String, _ lines: [String]) {
        let temporary = name + ".px-tmp"
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        let fd = openat(folder.descriptor, temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            logger.warning(
                "cannot write an info file", metadata: ["path": "\(folder.path)/\(name)", "errno": "\(errno)"])
            return
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let closed = close(fd)
        guard written == bytes.count, closed == 0, renameat(folder.descriptor, temporary, folder.descriptor, name) == 0
        else {
            logger.warning(
                "cannot write an info file", metadata: ["path": "\(folder.path)/\(name)", "errno": "\(errno)"])
            unlinkat(folder.descriptor, temporary, 0)
            return
        }
    }
}

extension SeriesBook where C == ContinuousClock {
    /// A book on the continuous clock; `seriesTimeout` in seconds.
    public init(
        storage: StorageRoot, seriesTimeout: Double?, logger: Logger = Logger(label: "px.series"),
        emit: @escaping @Sendable (SeriesCompletion) -> Void
    ) {
        self.init(
            storage: storage, seriesTimeout: seriesTimeout.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            clock: ContinuousClock(), logger: logger, emit: emit)
    }
}

/// What the info files say about a series, from the first instance received into it.
public struct SeriesFacts: Sendable, Hashable {
    var patientID, patientName, studyDescription, studyDate, studyUID: String
    var seriesDescription, seriesDate, seriesUID: String

    public init(_ dataSet: DataSet) {
        func text(_ tag: Tag) -> String {
            // One line each in an INI file: controls become spaces.
            let raw = dataSet.string(tag)?.trimmingSpaces ?? ""
            return String(
                String.UnicodeScalarView(raw.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        }
        patientID = text(.patientID)
        patientName = text(.patientName)
        studyDescription = text(.studyDescription)
        studyDate = text(.studyDate)
        studyUID = text(.studyInstanceUID)
        seriesDescription = text(.seriesDescription)
        seriesDate = text(.seriesDate)
        seriesUID = text(.seriesInstanceUID)
    }
}
