import ArgumentParser
import PXCore

/// What px-move and px-get retrieve: the UIDs on the command line, or everything in a px-find result
/// piped into stdin (PS3.4 §C.4.2, §C.4.3: a study, optionally one series, optionally instances), or a whole
/// patient (`--PatientID` alone). A series or instances given without their study (pypx 0.8's `--seriesUID`)
/// have it found with one C-FIND first.
public struct RetrieveOptions: ParsableArguments {
    @Option(name: .long, help: "Information model: Patient Root or Study Root (PS3.4 C.6).")
    public var model: QueryModel = .studyRoot

    @Option(
        name: .customLong("PatientID"),
        help: "PatientID (needed for --model patient); alone, every study of the patient is retrieved.")
    public var patientID: String?

    @Option(
        name: .customLong("StudyInstanceUID"),
        help: "The study to retrieve (repeatable: the studies are retrieved one after another, on one association).")
    public var studyInstanceUIDs: [String] = []

    /// The study, when exactly one is given.
    public var studyInstanceUID: String? {
        get { studyInstanceUIDs.count == 1 ? studyInstanceUIDs[0] : nil }
        set { studyInstanceUIDs = newValue.map { [$0] } ?? [] }
    }

    @Option(
        name: [.customLong("SeriesInstanceUID"), .customLong("seriesUID")],
        help: "A series of the study (without --StudyInstanceUID, its study is found with one C-FIND).")
    public var seriesInstanceUID: String?

    @Option(
        name: .customLong("SOPInstanceUID"),
        help: "Instances of the series (repeatable; without the series and study UIDs, found with one C-FIND).")
    public var sopInstanceUIDs: [String] = []

    public init() {}

    public func validate() throws {
        if studyInstanceUIDs.count > 1 && (seriesInstanceUID != nil || !sopInstanceUIDs.isEmpty) {
            throw ValidationError("--SeriesInstanceUID and --SOPInstanceUID go with one --StudyInstanceUID at most")
        }
    }

    /// Throws a usage error when there are no UIDs and nothing can be piped in (stdin is a terminal).
    /// `command` names the command in the message.
    public func validateSource(command: String) throws {
        if !namesTarget && StandardInput.isTerminal {
            throw ValidationError(
                "give --StudyInstanceUID, --SeriesInstanceUID, --SOPInstanceUID or --PatientID, "
                    + "or pipe a px-find result into \(command)")
        }
    }

    /// Whether the options name what to retrieve (UIDs, or a PatientID alone: the whole patient).
    var namesTarget: Bool {
        !studyInstanceUIDs.isEmpty || seriesInstanceUID != nil || !sopInstanceUIDs.isEmpty || patientID != nil
    }

    /// What to retrieve: the UIDs given (a series or instances without their study: ``RetrieveSelection/needsStudy``),
    /// else every target in the px-find result on stdin, each with `--PatientID` when the result holds none;
    /// `--PatientID` alone with nothing on stdin (a terminal, or empty) is the whole patient
    /// (``RetrieveSelection/isPatient``).
    /// A px-find result of no match (``RetrieveSelection/isNoMatch(pxFindOutput:)``) is no target at all.
    /// - Throws: ``PXError/usage(_:)`` when stdin is not px-find output or names nothing; `verb` names
    ///   the operation in the message ("move", "get").
    public func targets(verb: String) throws(PXError) -> [RetrieveSelection] {
        if !studyInstanceUIDs.isEmpty {
            var seen = Set<String>()
            return studyInstanceUIDs.filter { seen.insert($0).inserted }.map {
                RetrieveSelection(
                    patientID: patientID, studyInstanceUID: $0, seriesInstanceUID: seriesInstanceUID,
                    sopInstanceUIDs: sopInstanceUIDs)
            }
        }
        if seriesInstanceUID != nil || !sopInstanceUIDs.isEmpty {
            return [
                RetrieveSelection(
                    patientID: patientID, studyInstanceUID: "", seriesInstanceUID: seriesInstanceUID,
                    sopInstanceUIDs: sopInstanceUIDs)
            ]
        }
        if let patientID, StandardInput.isTerminal { return [.patient(patientID)] }
        let text = StandardInput.readText()
        if let patientID, text.allSatisfy(\.isWhitespace) { return [.patient(patientID)] }
        var found = try RetrieveSelection.parse(pxFindOutput: text)
        // px-find found nothing: nothing to do, a success (issue 32), not a usage error.
        if found.isEmpty && RetrieveSelection.isNoMatch(pxFindOutput: text) { return [] }
        guard !found.isEmpty else { throw .usage("nothing to \(verb): stdin holds no StudyInstanceUID") }
        for index in found.indices where found[index].patientID == nil { found[index].patientID = patientID }
        return found
    }
}
