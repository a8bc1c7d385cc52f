import DICOMData

extension PXOutput {
    /// The return keys pypx 3.12.6's px-find asks at both levels of its two-phase query (`Find.query`, sorted as
    /// it sends them); px asks the same in the pypx formats, so that its study and series entries have pypx's
    /// keys, key for key (plus SpecificCharacterSet, which px asks to decode text right, PS3.5 §6.1.2.5).
    public static let pypxReturnKeywords = [
        "AccessionNumber", "AcquisitionProtocolDescription", "AcquisitionProtocolName", "InstanceNumber",
        "ModalitiesInStudy", "Modality", "NumberOfPatientRelatedInstances", "NumberOfPatientRelatedSeries",
        "NumberOfPatientRelatedStudies", "NumberOfSeriesRelatedInstances", "NumberOfStudyRelatedInstances",
        "NumberOfStudyRelatedSeries", "PatientAge", "PatientBirthDate", "PatientID", "PatientName", "PatientSex",
        "PerformedStationAETitle", "ProtocolName", "SeriesDate", "SeriesDescription", "SeriesInstanceUID",
        "StudyDate", "StudyDescription", "StudyInstanceUID",
    ]

    /// The C-FIND px sends as a DCMTK findscu command line, the string pypx puts in `command` (pypx builds it
    /// and runs it; px writes it whatever the backend): `findscu -S -k AccessionNumber -k "PatientID=P1" ...
    /// -aec ORTHANC -aet PXSCU 127.0.0.1 4242`, one `-k` per key sorted by keyword, a key with a value quoted
    /// as pypx quotes it. pypx's px-report reads the keywords asked, and the level, from it.
    public static func findscuCommandLine(
        _ identifier: DataSet, level: QueryLevel, model: QueryModel, address: FindscuAddress
    ) -> String {
        var keys: [(String, String)] = [("QueryRetrieveLevel", level.dicomValue)]
        if case .object(let members) = identifier.flatJSON() {
            for member in members where member.key != "QueryRetrieveLevel" {
                let value: String
                switch member.value {
                case .string(let s): value = s
                case .array(let values): value = values.compactMap(\.stringValue).joined(separator: "\\")
                default: value = ""
                }
                keys.append((member.key, value))
            }
        }
        var words = ["findscu", model == .patientRoot ? "-P" : "-S"]
        for (keyword, value) in keys.sorted(by: { $0.0 < $1.0 }) {
            words += ["-k", value.isEmpty ? keyword : "\"\(keyword)=\(value)\""]
        }
        words += [
            "-aec", address.calledAETitle, "-aet", address.callingAETitle, address.host, String(address.port),
        ]
        return words.joined(separator: " ")
    }
}

/// The end of pypx's findscu command line: `-aec CALLED -aet CALLING HOST PORT`.
///
/// For a DIMSE node it is the node the query went to (``init(_:)``). A DICOMweb service has no AE title: its
/// line (which px-report reads for the keywords and the level) names the service's host and port with findscu's
/// default titles, as findscu would be run against that host (``init(host:port:callingAETitle:)``).
public struct FindscuAddress: Hashable, Sendable {
    /// findscu's default called AE title (`-aec`).
    public static let findscuDefaultCalledAETitle = "ANY-SCP"

    public var calledAETitle: String
    public var callingAETitle: String
    public var host: String
    public var port: Int

    /// The node of `connection`, and its calling AE title.
    public init(_ connection: Connection) {
        self.init(
            host: connection.node.host, port: connection.node.port, callingAETitle: connection.local.aeTitle,
            calledAETitle: connection.node.calledAETitle)
    }

    public init(
        host: String, port: Int, callingAETitle: String, calledAETitle: String = Self.findscuDefaultCalledAETitle
    ) {
        self.calledAETitle = calledAETitle
        self.callingAETitle = callingAETitle
        self.host = host
        self.port = port
    }
}
