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
        _ identifier: DataSet, level: QueryLevel, model: QueryModel, connection: Connection
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
            "-aec", connection.node.calledAETitle, "-aet", connection.local.aeTitle, connection.node.host,
            String(connection.node.port),
        ]
        return words.joined(separator: " ")
    }
}
