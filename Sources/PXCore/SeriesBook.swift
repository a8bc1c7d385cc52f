import DICOMData
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps pypx's completion files and decides when a series is complete.
///
/// For each series folder (pypx's tree, issue 5): `patient.info` and `study.info` in the patient and
/// study folders (`[PATIENT] patientid, patientname, location`; `[STUDY] studydescription, studydate,
/// studyinstanceuid, location`), and `receiving.series` in the series folder while instances arrive
/// (`[SERIES] seriesdescription, seriesdate, seriesinstanceuid, location`). A series is complete when
/// every association that brought instances into it has ended, or when no instance arrived for the
/// series timeout; then `receiving.series` becomes `series.info` (with `instances = N` added) and a
/// ``ListenEvent/seriesComplete(_:)`` is emitted, once. A series that receives more instances later
/// is reopened (`series.info` becomes `receiving.series` again) and completes again.
///
/// With a custom layout of other than four components only the series file is kept (in the file's
/// folder). Info files are written to a temporary name and renamed, so a reader never sees half a file.
public actor SeriesBook {
    /// What the info files say about a series, from the first instance received into it.
    public struct Facts: Sendable, Hashable {
        var patientID, patientName, studyDescription, studyDate, studyUID: String
        var seriesDescription, seriesDate, seriesUID: String

        public init(_ dataSet: DataSet) {
            func text(_ tag: Tag) -> String {
                // One line each in an INI file: controls become spaces.
                let raw = dataSet.string(tag)?.trimmingSpaces ?? ""
                return String(String.UnicodeScalarView(raw.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
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

    private struct Open {
        var facts: Facts
        var directory: String
        var instances: Int
        var associations: Set<UInt64>
        var lastActivity: ContinuousClock.Instant
    }

    private let seriesTimeout: Duration?
    private let logger: Logger
    private let emit: @Sendable (ListenEvent) -> Void
    private var receiving: [String: Open] = [:]
    private var knownInfo: Set<String> = []

    /// - Parameters:
    ///   - seriesTimeout: seconds of silence after which a series is complete; `nil` for none.
    ///   - emit: receives the ``ListenEvent/seriesComplete(_:)`` events.
    public init(seriesTimeout: Double?, logger: Logger = Logger(label: "px.series"), emit: @escaping @Sendable (ListenEvent) -> Void) {
        self.seriesTimeout = seriesTimeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
        self.logger = logger
        self.emit = emit
    }

    /// Records a placed instance; opens its series (writing the info files) on the first one.
    public func added(_ placement: InstancePlacer.Placement, facts: @autoclosure () -> Facts, association: UInt64) {
        let directories = placement.directories
        guard let seriesDirectory = directories.last else { return }
        let now = ContinuousClock.now
        if var entry = receiving[seriesDirectory] {
            entry.instances += 1
            entry.associations.insert(association)
            entry.lastActivity = now
            receiving[seriesDirectory] = entry
            return
        }
        let facts = facts()
        receiving[seriesDirectory] = Open(facts: facts, directory: seriesDirectory, instances: 1, associations: [association], lastActivity: now)
        if directories.count == 3 {
            writeOnce(directories[0] + "/patient.info", [
                "[PATIENT]", "patientid = \(facts.patientID)", "patientname = \(facts.patientName)", "location = \(directories[0])",
            ])
            writeOnce(directories[1] + "/study.info", [
                "[STUDY]", "studydescription = \(facts.studyDescription)", "studydate = \(facts.studyDate)",
                "studyinstanceuid = \(facts.studyUID)", "location = \(directories[1])",
            ])
        }
        unlink(seriesDirectory + "/series.info")
        write(seriesDirectory + "/receiving.series", seriesLines(facts, directory: seriesDirectory, instances: nil))
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

    /// Completes the series idle for longer than the series timeout.
    public func sweep() {
        guard let seriesTimeout else { return }
        let now = ContinuousClock.now
        for (key, entry) in receiving where now - entry.lastActivity >= seriesTimeout {
            complete(key, reason: "timeout")
        }
    }

    /// Sweeps every quarter of the series timeout (at most every second) until cancelled.
    public func runTimer() async {
        guard let seriesTimeout else { return }
        let period = min(seriesTimeout / 4, .seconds(1))
        while !Task.isCancelled {
            do { try await Task.sleep(for: period) } catch { return }
            sweep()
        }
    }

    /// Series still receiving (their folders keep `receiving.series`).
    public var openSeries: Int { receiving.count }

    private func complete(_ key: String, reason: String) {
        guard let entry = receiving.removeValue(forKey: key) else { return }
        write(entry.directory + "/series.info", seriesLines(entry.facts, directory: entry.directory, instances: entry.instances))
        unlink(entry.directory + "/receiving.series")
        emit(.seriesComplete(SeriesCompletion(
            directory: entry.directory, seriesInstanceUID: entry.facts.seriesUID, studyInstanceUID: entry.facts.studyUID,
            patientID: entry.facts.patientID, instances: entry.instances, reason: reason)))
    }

    private func seriesLines(_ facts: Facts, directory: String, instances: Int?) -> [String] {
        var lines = [
            "[SERIES]", "seriesdescription = \(facts.seriesDescription)", "seriesdate = \(facts.seriesDate)",
            "seriesinstanceuid = \(facts.seriesUID)", "location = \(directory)",
        ]
        if let instances { lines.append("instances = \(instances)") }
        return lines
    }

    private func writeOnce(_ path: String, _ lines: [String]) {
        guard !knownInfo.contains(path) else { return }
        knownInfo.insert(path)
        if access(path, F_OK) == 0 { return }
        write(path, lines)
    }

    /// Writes `path` through a temporary name in the same folder and a rename.
    private func write(_ path: String, _ lines: [String]) {
        let temporary = path + ".px-tmp"
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            logger.warning("cannot write an info file", metadata: ["path": "\(path)", "errno": "\(errno)"])
            return
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let closed = close(fd)
        guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
            logger.warning("cannot write an info file", metadata: ["path": "\(path)", "errno": "\(errno)"])
            unlink(temporary)
            return
        }
    }
}
