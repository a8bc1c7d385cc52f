import DICOMData

/// px-find's `--model worklist` identifier: a Modality Worklist query (PS3.4 Annex K, Table K.6-1).
///
/// The keys of the Scheduled Procedure Step (ScheduledStationAETitle, ScheduledProcedureStepStartDate,
/// Modality, ...) go into the one item of the Scheduled Procedure Step Sequence (0040,0100), as sequence
/// matching asks (PS3.4 §C.2.2.2.6, §K.6.1.2.2); every other key (`-k` for any keyword, the pypx flags)
/// stays at the top level. The identifier has no QueryRetrieveLevel (the worklist model has no levels).
public enum WorklistQuery {
    /// (0040,0100) Scheduled Procedure Step Sequence.
    public static let stepSequence = Tag(0x0040, 0x0100)

    /// The top-level return keys asked when none are given: the patient, the imaging service request and
    /// the requested procedure (PS3.4 Table K.6-1).
    public static let returnKeys = [
        "SpecificCharacterSet", "AccessionNumber", "ReferringPhysicianName", "PatientName", "PatientID",
        "PatientBirthDate", "PatientSex", "StudyInstanceUID", "RequestedProcedureDescription", "RequestedProcedureID",
    ]

    /// The Scheduled Procedure Step item's return keys asked when none are given.
    public static let stepReturnKeys = [
        "ScheduledStationAETitle", "ScheduledProcedureStepStartDate", "ScheduledProcedureStepStartTime", "Modality",
        "ScheduledPerformingPhysicianName", "ScheduledProcedureStepDescription", "ScheduledStationName",
        "ScheduledProcedureStepLocation", "ScheduledProcedureStepID",
    ]

    /// The attributes of the Scheduled Procedure Step Sequence's item (PS3.4 Table K.6-1, PS3.3 §C.4.10):
    /// a key with one of these keywords is matched inside the sequence.
    public static let stepKeywords: Set<String> = Set(stepReturnKeys).union([
        "ScheduledProcedureStepEndDate", "ScheduledProcedureStepEndTime", "ScheduledProcedureStepStatus",
        "CommentsOnTheScheduledProcedureStep", "PreMedication", "RequestedContrastAgent",
        "ScheduledProtocolCodeSequence",
    ])

    /// The identifier for `keys`: `returnTags` (pypx's `--QueryReturnTags`, keywords at either place)
    /// replace the default return keys.
    public static func identifier(keys: [QueryKey], returnTags: [String]? = nil) throws(PXError) -> DataSet {
        var top = DataSet()
        var step = DataSet()
        var returnKeys: [QueryKey] = []
        for name in returnTags ?? (Self.returnKeys + Self.stepReturnKeys) where !name.isEmpty {
            returnKeys.append(try QueryKey.make(name: name, value: nil))
        }
        for key in returnKeys + keys {
            if Self.stepKeywords.contains(key.keyword) {
                step.set(key)
                // A non-ASCII value's character set belongs to the identifier's top level (PS3.5 §7.5.1).
                if let characterSet = step.remove(.specificCharacterSet) { top.set(characterSet) }
            } else if key.tag != Self.stepSequence {
                top.set(key)
            }
        }
        top.set(
            DataElement(
                tag: Self.stepSequence, vr: .SQ, value: .sequence([Item(dataSet: step)]),
                hasUndefinedLength: true))
        return top
    }

    /// A match as table rows: one per scheduled step, the match's own attributes then the step's (a table
    /// has no room for a sequence).
    public static func rows(_ match: DataSet) -> [DataSet] {
        var top = match
        let steps = top.remove(Self.stepSequence)?.items ?? []
        guard !steps.isEmpty else { return [top] }
        return steps.map { step in
            var row = top
            for element in step.dataSet.elements { row.set(element) }
            return row
        }
    }
}
