/// The return keys px-find asks for when none are given, per level (after pypx 3.x's list).
public enum QueryDefaults {
    public static func returnKeys(for level: QueryLevel) -> [String] {
        switch level {
        case .patient:
            return ["PatientID", "PatientName", "PatientBirthDate", "PatientSex", "NumberOfPatientRelatedStudies"]
        case .study:
            return [
                "SpecificCharacterSet", "AccessionNumber", "PatientID", "PatientName", "PatientBirthDate", "PatientSex",
                "PatientAge", "StudyDate", "StudyTime", "StudyDescription", "StudyInstanceUID", "ModalitiesInStudy",
                "NumberOfStudyRelatedSeries", "NumberOfStudyRelatedInstances",
            ]
        case .series:
            return [
                "SpecificCharacterSet", "StudyInstanceUID", "SeriesInstanceUID", "SeriesDescription", "SeriesDate",
                "SeriesTime", "SeriesNumber", "Modality", "ProtocolName", "PerformedStationAETitle",
                "NumberOfSeriesRelatedInstances",
            ]
        case .image:
            return [
                "SpecificCharacterSet", "StudyInstanceUID", "SeriesInstanceUID", "SOPInstanceUID", "SOPClassUID",
                "InstanceNumber",
            ]
        }
    }

    /// Keys that belong to the series phase of the two-phase query.
    public static let seriesKeywords: Set<String> = [
        "SeriesInstanceUID", "SeriesDescription", "SeriesDate", "SeriesTime", "SeriesNumber", "Modality",
        "ProtocolName", "PerformedStationAETitle", "AcquisitionProtocolName", "AcquisitionProtocolDescription",
        "NumberOfSeriesRelatedInstances", "BodyPartExamined",
    ]
}
