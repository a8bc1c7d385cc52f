import DICOMData

extension QueryRetrieveModel {
    /// The model of a FIND, MOVE or GET SOP class UID.
    init?(sopClassUID: String) {
        for model in QueryRetrieveModel.allCases
        where [model.findSOPClass, model.moveSOPClass, model.getSOPClass].contains(sopClassUID) {
            self = model
            return
        }
        return nil
    }

    /// The levels of the model, top down (PS3.4 §C.6.1.1, §C.6.2.1): Study Root has no PATIENT level.
    public var levels: [QueryRetrieveLevel] {
        self == .patientRoot ? [.patient, .study, .series, .image] : [.study, .series, .image]
    }
}

extension QueryRetrieveLevel {
    /// The unique key of the level (PS3.4 §C.6.1.1.2 to §C.6.1.1.5): Patient ID, Study/Series/SOP Instance UID.
    public var uniqueKey: Tag {
        // Every level's raw value is a Query/Retrieve Level value (``DICOMData/EntityMatching/uniqueKey(level:)``).
        EntityMatching.uniqueKey(level: self.rawValue) ?? .sopInstanceUID
    }

    /// The VR of ``uniqueKey``.
    public var uniqueKeyVR: VR { self == .patient ? .LO : .UI }
}
